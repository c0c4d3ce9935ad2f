// PulseAudio's buffer-attribute rules for playback (pulse/buffer_attributes.h):
// defaults, clamps, whole frames, and the floor the sink's latency sets.
#include "pulse/buffer_attributes.h"

#include <boost/test/unit_test.hpp>

using namespace audiod::pulse;

namespace {

constexpr uint32_t kStereo16 = 4; // bytes per frame
constexpr uint32_t kRate = 48000;

BufferAttributes asked(uint32_t maxlength, uint32_t tlength, uint32_t prebuf, uint32_t minreq) {
    BufferAttributes a;
    a.maxlength = maxlength;
    a.tlength = tlength;
    a.prebuf = prebuf;
    a.minreq = minreq;
    return a;
}

} // namespace

BOOST_AUTO_TEST_SUITE(pulse_buffer_attributes)

BOOST_AUTO_TEST_CASE(defaults_are_pulseaudios) {
    const BufferAttributes a = playback_attributes({}, kStereo16, kRate, 5333);
    BOOST_CHECK_EQUAL(a.maxlength, 4u << 20);
    BOOST_CHECK_EQUAL(a.tlength, 2 * kRate * kStereo16); // 2 s
    BOOST_CHECK_EQUAL(a.minreq, kRate / 50 * kStereo16); // 20 ms
    BOOST_CHECK_EQUAL(a.prebuf, a.tlength - a.minreq + kStereo16);
}

BOOST_AUTO_TEST_CASE(what_is_asked_is_kept_when_it_can_work) {
    // pacat --latency-msec=20: tlength 20 ms, the rest default.
    const uint32_t twenty_ms = 960 * kStereo16;
    const BufferAttributes a = playback_attributes(
        asked(kDefaultAttribute, twenty_ms, kDefaultAttribute, kDefaultAttribute), kStereo16, kRate,
        5333);
    BOOST_CHECK_EQUAL(a.tlength, twenty_ms);
    BOOST_CHECK_EQUAL(a.minreq, twenty_ms / 4);
    BOOST_CHECK_EQUAL(a.prebuf, twenty_ms - twenty_ms / 4 + kStereo16);
    // prebuf 0: playing never waits.
    BOOST_CHECK_EQUAL(playback_attributes(asked(kDefaultAttribute, twenty_ms, 0, kDefaultAttribute),
                                          kStereo16, kRate, 5333)
                          .prebuf,
                      0u);
}

BOOST_AUTO_TEST_CASE(tlength_never_falls_below_the_sink_latency_and_two_requests) {
    // 1 ms asked, minreq 5 ms, on a sink 10 ms deep: 10 + 2 x 5 ms.
    const BufferAttributes a = playback_attributes(
        asked(kDefaultAttribute, 48 * kStereo16, kDefaultAttribute, 240 * kStereo16), kStereo16,
        kRate, 10000);
    BOOST_CHECK_EQUAL(a.tlength, (480 + 2 * 240) * kStereo16);
    BOOST_CHECK_LE(a.prebuf, a.tlength - a.minreq + kStereo16);
}

BOOST_AUTO_TEST_CASE(everything_is_whole_frames_within_maxlength) {
    constexpr uint32_t kStereo24 = 6; // packed s24, the frame 4 MiB does not divide
    const BufferAttributes a =
        playback_attributes(asked(0xfffffff0u, 1001, 999, 17), kStereo24, kRate, 0);
    for (const uint32_t value : {a.maxlength, a.tlength, a.prebuf, a.minreq}) {
        BOOST_CHECK_EQUAL(value % kStereo24, 0u);
        BOOST_CHECK_GT(value, 0u);
    }
    BOOST_CHECK_LE(a.maxlength, 4u << 20);
    const BufferAttributes small = playback_attributes(
        asked(400, 4000, kDefaultAttribute, kDefaultAttribute), kStereo16, kRate, 0);
    BOOST_CHECK_EQUAL(small.maxlength, 400u);
    BOOST_CHECK_LE(small.tlength, small.maxlength);
    BOOST_CHECK_LE(small.minreq, small.tlength);
}

BOOST_AUTO_TEST_CASE(time_and_bytes_convert_by_whole_frames) {
    BOOST_CHECK_EQUAL(usec_to_bytes(20000, kStereo16, kRate), 3840u);
    BOOST_CHECK_EQUAL(usec_to_bytes(1, kStereo16, kRate), 4u); // rounded up
    BOOST_CHECK_EQUAL(bytes_to_usec(3840, kStereo16, kRate), 20000u);
    BOOST_CHECK_EQUAL(bytes_to_usec(3840, 0, kRate), 0u);
}

BOOST_AUTO_TEST_SUITE_END()
