// A libpulse record stream on the pulse thread (pulse/record_stream.h), on a
// real engine ring whose RT side the test plays by writing it: fragments,
// flushes, indices, and the attribute rules.
#include "device/stream.h"
#include "pulse/record_stream.h"

#include <boost/test/unit_test.hpp>

#include <fcntl.h>
#include <sys/eventfd.h>

using namespace audiod;
using namespace audiod::pulse;

namespace {

constexpr uint32_t kRecordFrame = 4; // s16le stereo

struct RecordOnRing {
    StreamRing ring;
    RecordStream stream;
    uint64_t captured = 0;

    RecordOnRing(uint64_t capacity, uint32_t fragment_frames)
        : ring(std::get<StreamRing>(
              StreamRing::create(1, audiod::SampleFormat::s16le, 48000, 2, capacity)))
        , stream(0, {3, 2, 48000}, {{1, 2}}, [&] {
            BufferAttributes a;
            a.maxlength = 4u << 20;
            a.fragsize = fragment_frames * kRecordFrame;
            return a;
        }()) {
        EngineRing made;
        made.stream_id = 1;
        made.memfd = UniqueFd(::fcntl(ring.memfd(), F_DUPFD_CLOEXEC, 0));
        made.wake_fd = UniqueFd(::eventfd(0, EFD_CLOEXEC));
        made.capacity_frames = ring.capacity();
        made.memory_bytes = ring.memory_bytes();
        made.device = "speakers.monitor";
        BOOST_REQUIRE_EQUAL(stream.bind(std::move(made)), "");
    }
    // The source captures `frames` frames of `value`.
    void capture(uint64_t frames, uint8_t value) {
        std::vector<uint8_t> bytes(frames * kRecordFrame, value);
        ring.view().copy_in(captured, bytes.data(), frames);
        captured += frames;
        ring.header()->server_pos.store(captured);
    }
};

} // namespace

BOOST_AUTO_TEST_SUITE(pulse_record_stream)

BOOST_AUTO_TEST_CASE(audio_goes_out_a_fragment_at_a_time) {
    RecordOnRing r(4800, 480);
    r.capture(479, 1);
    BOOST_CHECK(r.stream.take_chunk().empty());
    BOOST_CHECK_EQUAL(r.stream.take_chunk(true).size(), 479 * kRecordFrame); // when asked
    r.capture(1000, 2);
    const auto first = r.stream.take_chunk();
    BOOST_REQUIRE_EQUAL(first.size(), 480 * kRecordFrame);
    BOOST_CHECK_EQUAL(first.front(), 2);
    BOOST_CHECK_EQUAL(r.stream.take_chunk().size(), 480 * kRecordFrame);
    BOOST_CHECK(r.stream.take_chunk().empty()); // 40 left
    BOOST_CHECK_EQUAL(r.stream.read_index(), int64_t{1439} * kRecordFrame);
    BOOST_CHECK_EQUAL(r.stream.write_index(), int64_t{1479} * kRecordFrame);
}

BOOST_AUTO_TEST_CASE(a_flush_drops_what_is_ready) {
    RecordOnRing r(4800, 480);
    r.capture(2000, 1);
    r.stream.flush();
    BOOST_CHECK_EQUAL(r.stream.ready_bytes(), 0u);
    BOOST_CHECK(r.stream.take_chunk(true).empty());
    r.capture(480, 3);
    const auto next = r.stream.take_chunk();
    BOOST_REQUIRE_EQUAL(next.size(), 480 * kRecordFrame);
    BOOST_CHECK_EQUAL(next.front(), 3);
}

BOOST_AUTO_TEST_CASE(attributes_default_to_two_seconds_within_maxlength) {
    const BufferAttributes a = record_attributes({}, kRecordFrame, 48000);
    BOOST_CHECK_EQUAL(a.maxlength, 4u << 20);
    BOOST_CHECK_EQUAL(a.fragsize, 2 * 48000 * kRecordFrame);
    BufferAttributes asked;
    asked.maxlength = 1000;
    asked.fragsize = 999999;
    const BufferAttributes small = record_attributes(asked, 6, 48000);
    BOOST_CHECK_EQUAL(small.maxlength, 996u);
    BOOST_CHECK_EQUAL(small.fragsize, 996u);
    asked.fragsize = 1;
    BOOST_CHECK_EQUAL(record_attributes(asked, 6, 48000).fragsize, 6u);
}

BOOST_AUTO_TEST_SUITE_END()
