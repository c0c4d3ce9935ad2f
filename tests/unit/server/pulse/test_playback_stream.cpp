// A libpulse playback stream on the pulse thread (pulse/playback_stream.h),
// on a real engine ring whose RT side the test plays by moving the ring's
// server position: flow control, prebuffering, drains, seeks, overflows.
#include "device/stream.h"
#include "pulse/playback_stream.h"

#include <boost/test/unit_test.hpp>

#include <climits>
#include <fcntl.h>
#include <sys/eventfd.h>
#include <thread>

using namespace audiod;
using namespace audiod::pulse;

namespace {

constexpr uint32_t kFrame = 4; // s16le stereo

// A PlaybackStream bound to a ring of `capacity` frames; the test is the
// RT thread.
struct StreamOnRing {
    StreamRing ring;
    PlaybackStream stream;

    StreamOnRing(uint64_t capacity, const BufferAttributes& attributes, bool early_requests = false)
        : ring(std::get<StreamRing>(
              StreamRing::create(1, audiod::SampleFormat::s16le, 48000, 2, capacity)))
        , stream(0, {3, 2, 48000}, {{1, 2}}, attributes, early_requests) {
        PlaybackStream::Made made;
        made.stream_id = 1;
        made.memfd = UniqueFd(::fcntl(ring.memfd(), F_DUPFD_CLOEXEC, 0));
        made.wake_fd = UniqueFd(::eventfd(0, EFD_CLOEXEC));
        made.capacity_frames = ring.capacity();
        made.memory_bytes = ring.memory_bytes();
        made.device = "speakers";
        BOOST_REQUIRE_EQUAL(stream.bind(std::move(made)), "");
    }
    // The sink takes `frames` more.
    void take(uint64_t frames) {
        const uint64_t at = ring.header()->server_pos.load() + frames;
        ring.header()->server_pos.store(at);
    }
    [[nodiscard]] bool started() const {
        return (ring.header()->client_flags.load() & kClientFlagStarted) != 0;
    }
    bool write_frames(uint64_t frames, uint8_t value = 1, int64_t offset = 0,
                      SeekMode mode = SeekMode::relative) {
        const std::vector<uint8_t> bytes(frames * kFrame, value);
        return stream.write(bytes, offset, mode);
    }
    // Frame n of the ring, as its first byte.
    [[nodiscard]] uint8_t frame_at(uint64_t n) const {
        return ring.data()[n % ring.capacity() * kFrame];
    }
};

BufferAttributes attributes(uint32_t tlength, uint32_t minreq, uint32_t prebuf) {
    BufferAttributes a;
    a.maxlength = 4u << 20;
    a.tlength = tlength * kFrame;
    a.minreq = minreq * kFrame;
    a.prebuf = prebuf * kFrame;
    return a;
}

} // namespace

BOOST_AUTO_TEST_SUITE(pulse_playback_stream)

BOOST_AUTO_TEST_CASE(requests_come_a_minreq_at_a_time_never_a_quantum) {
    StreamOnRing s(4800, attributes(4800, 960, 0));
    BOOST_CHECK_EQUAL(s.stream.take_first_request(), 4800 * kFrame);
    BOOST_CHECK(s.write_frames(4800));
    BOOST_CHECK_EQUAL(s.stream.take_request(), 0u);
    // The sink takes quanta of 64: nothing is asked for till 960 are missing.
    for (int i = 0; i < 14; ++i) {
        s.take(64);
        BOOST_CHECK_EQUAL(s.stream.take_request(), 0u);
    }
    s.take(64); // 960 taken
    BOOST_CHECK_EQUAL(s.stream.take_request(), 960 * kFrame);
    // Asked for and not yet come counts as queued.
    s.take(64);
    BOOST_CHECK_EQUAL(s.stream.take_request(), 0u);
    BOOST_CHECK(s.write_frames(960));
    s.take(960 - 64);
    BOOST_CHECK_EQUAL(s.stream.take_request(), 960 * kFrame);
}

// paplay's 2 s queue, minreq 20 ms: asked for an eighth of it at a time
// (a wake-up of the server and the client 4 times a second, not 50), and
// woken by the ring only then; at every minreq if the client asked for
// EARLY_REQUESTS.
BOOST_AUTO_TEST_CASE(a_long_queue_is_asked_for_an_eighth_at_a_time) {
    for (const bool early : {false, true}) {
        StreamOnRing s(96000, attributes(96000, 960, 0), early);
        const uint64_t batch = early ? 960 : 12000;
        BOOST_CHECK_EQUAL(s.stream.request_batch(), batch * kFrame);
        BOOST_CHECK_EQUAL(s.ring.header()->wake_threshold.load(), batch);
        BOOST_CHECK_EQUAL(s.stream.take_first_request(), 96000 * kFrame);
        BOOST_CHECK(s.write_frames(96000));
        s.take(batch - 64);
        BOOST_CHECK_EQUAL(s.stream.take_request(), 0u);
        s.take(64);
        BOOST_CHECK_EQUAL(s.stream.take_request(), batch * kFrame);
    }
}

BOOST_AUTO_TEST_CASE(playing_starts_once_prebuf_is_queued) {
    StreamOnRing s(4800, attributes(4800, 960, 2000));
    BOOST_CHECK(!s.started());
    BOOST_CHECK(s.write_frames(1999));
    BOOST_CHECK(!s.started());
    BOOST_CHECK(s.write_frames(1));
    BOOST_CHECK(s.started());
    StreamOnRing at_once(4800, attributes(4800, 960, 0));
    BOOST_CHECK(at_once.started());
    // TRIGGER starts whatever is queued.
    StreamOnRing triggered(4800, attributes(4800, 960, 2000));
    BOOST_CHECK(triggered.write_frames(10));
    triggered.stream.trigger();
    BOOST_CHECK(triggered.started());
}

BOOST_AUTO_TEST_CASE(a_drain_is_answered_once_its_last_frame_is_taken) {
    StreamOnRing s(4800, attributes(4800, 960, 4000));
    BOOST_CHECK(s.write_frames(1000));
    s.stream.drain(42);
    BOOST_CHECK(s.started()); // a drain plays what there is, prebuf or not
    BOOST_CHECK((s.ring.header()->client_flags.load() & kClientFlagDraining) != 0);
    const auto now = PlaybackStream::Clock::now();
    BOOST_CHECK(s.stream.drained(now).empty());
    BOOST_CHECK(s.stream.next_deadline()); // looked at again soon
    s.take(999);
    BOOST_CHECK(s.stream.drained(now).empty());
    s.take(1);
    // The ring's latency is 0 here: heard as soon as taken.
    const auto due = s.stream.drained(now);
    BOOST_REQUIRE_EQUAL(due.size(), 1u);
    BOOST_CHECK_EQUAL(due[0], 42u);
    BOOST_CHECK(!s.stream.next_deadline());
}

BOOST_AUTO_TEST_CASE(a_drain_waits_for_the_sinks_latency) {
    StreamOnRing s(4800, attributes(4800, 960, 0));
    s.ring.header()->sink_latency_frames.store(480); // 10 ms
    BOOST_CHECK(s.write_frames(100));
    s.stream.drain(7);
    s.take(100);
    const auto now = PlaybackStream::Clock::now();
    BOOST_CHECK(s.stream.drained(now).empty());
    BOOST_CHECK(s.stream.drained(now + std::chrono::milliseconds(9)).empty());
    BOOST_CHECK_EQUAL(s.stream.drained(now + std::chrono::milliseconds(11)).size(), 1u);
}

BOOST_AUTO_TEST_CASE(indices_are_the_rings_positions_in_bytes) {
    StreamOnRing s(4800, attributes(4800, 960, 0));
    BOOST_CHECK(s.write_frames(1000));
    s.take(300);
    BOOST_CHECK_EQUAL(s.stream.write_index(), 1000 * kFrame);
    BOOST_CHECK_EQUAL(s.stream.read_index(), 300 * kFrame);
    BOOST_CHECK(s.stream.playing());
    // A flush drops what is queued: the read index meets the write index.
    BOOST_CHECK_EQUAL(s.stream.flush_position(), 1000u);
    BOOST_CHECK(!s.started() || s.stream.attributes().prebuf == 0);
}

BOOST_AUTO_TEST_CASE(seeks_leave_silence_forward_and_rewrite_what_is_not_taken) {
    StreamOnRing s(4800, attributes(4800, 960, 0));
    BOOST_CHECK(s.write_frames(100, 1));
    // Absolute, 50 frames past the end: silence, then the data.
    BOOST_CHECK(s.write_frames(10, 2, 150 * kFrame, SeekMode::absolute));
    BOOST_CHECK_EQUAL(s.stream.write_index(), 160 * kFrame);
    BOOST_CHECK_EQUAL(s.frame_at(120), 0);
    BOOST_CHECK_EQUAL(s.frame_at(150), 2);
    // Back over what the sink has not taken: rewritten.
    s.take(50);
    BOOST_CHECK(s.write_frames(10, 3, int64_t{-100} * kFrame, SeekMode::relative));
    BOOST_CHECK_EQUAL(s.frame_at(60), 3);
    BOOST_CHECK_EQUAL(s.stream.write_index(), 70 * kFrame);
    // Back past what it took: from what it took on.
    BOOST_CHECK(s.write_frames(5, 4, 0, SeekMode::relative_on_read));
    BOOST_CHECK_EQUAL(s.frame_at(50), 4);
    BOOST_CHECK(s.write_frames(5, 5, int64_t{-1000} * kFrame, SeekMode::relative_on_read));
    BOOST_CHECK_EQUAL(s.stream.write_index(), 55 * kFrame);
}

BOOST_AUTO_TEST_CASE(seeks_to_the_ends_of_64_bits_are_held_in_range) {
    StreamOnRing s(4800, attributes(4800, 960, 0));
    BOOST_CHECK(s.write_frames(10));
    // Far forward: silence up to what the ring holds (an overflow), no more.
    BOOST_CHECK(!s.write_frames(1, 1, INT64_MAX, SeekMode::relative));
    BOOST_CHECK_LE(s.ring.header()->client_pos.load(), s.ring.capacity());
    // Far back: from what the sink has taken, which is nothing yet.
    BOOST_CHECK(s.write_frames(1, 2, INT64_MIN, SeekMode::relative_on_read));
    BOOST_CHECK_EQUAL(s.frame_at(0), 2);
    BOOST_CHECK(s.write_frames(1, 3, INT64_MIN, SeekMode::absolute));
    BOOST_CHECK_EQUAL(s.stream.write_index(), 1 * kFrame);
}

BOOST_AUTO_TEST_CASE(more_than_the_ring_holds_is_an_overflow_and_the_rest_is_kept) {
    StreamOnRing s(1000, attributes(1000, 250, 0));
    const uint64_t capacity = s.ring.capacity();
    BOOST_CHECK(!s.write_frames(capacity + 10));
    BOOST_CHECK_EQUAL(s.stream.write_index(), static_cast<int64_t>(capacity * kFrame));
    s.take(10);
    BOOST_CHECK(s.write_frames(10));
}

BOOST_AUTO_TEST_CASE(a_frame_split_between_packets_is_joined) {
    StreamOnRing s(4800, attributes(4800, 960, 0));
    const std::vector<uint8_t> first{9, 9, 9, 9, 7, 7};
    const std::vector<uint8_t> second{7, 7, 5, 5, 5, 5};
    BOOST_CHECK(s.stream.write(first, 0, SeekMode::relative));
    BOOST_CHECK_EQUAL(s.stream.write_index(), 6);
    BOOST_CHECK(s.stream.write(second, 0, SeekMode::relative));
    BOOST_CHECK_EQUAL(s.stream.write_index(), 12);
    BOOST_CHECK_EQUAL(s.frame_at(0), 9);
    BOOST_CHECK_EQUAL(s.frame_at(1), 7);
    BOOST_CHECK_EQUAL(s.frame_at(2), 5);
}

// (A stream that waits for a frame: one that never waits keeps time
// through the dry spell, and what a slow machine writes after a few ms of
// it would be dropped as late; that is the next case's.)
BOOST_AUTO_TEST_CASE(an_underflow_is_told_once_per_running_dry) {
    StreamOnRing s(4800, attributes(4800, 960, 1));
    BOOST_CHECK(!s.stream.take_underflow()); // nothing played yet
    BOOST_CHECK(s.write_frames(100));
    s.take(50);
    BOOST_CHECK(s.stream.take_started());
    BOOST_CHECK(!s.stream.take_started());
    BOOST_CHECK(!s.stream.take_underflow());
    s.take(50);
    BOOST_CHECK(s.stream.take_underflow());
    BOOST_CHECK(!s.stream.take_underflow());
    BOOST_CHECK(s.write_frames(100));
    s.take(100);
    BOOST_CHECK(s.stream.take_underflow());
}

// prebuf 0: the read index goes on through an underrun (a player's clock
// follows it), and what is written for the time gone by is dropped.
BOOST_AUTO_TEST_CASE(a_stream_that_never_waits_keeps_time_through_an_underrun) {
    StreamOnRing s(48000, attributes(4800, 960, 0));
    BOOST_CHECK(s.write_frames(100, 1));
    s.take(100);
    BOOST_CHECK(s.stream.take_underflow());
    BOOST_CHECK(s.stream.playing());
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    // At least 50 ms (2400 frames) went by.
    BOOST_CHECK_GE(s.stream.read_index(), int64_t{2500} * kFrame);
    BOOST_CHECK_EQUAL(s.stream.write_index(), 100 * kFrame);
    // 100 frames written at the write index are all in the past: dropped.
    BOOST_CHECK(s.write_frames(100, 2));
    BOOST_CHECK_EQUAL(s.ring.header()->client_pos.load(), 100u);
    // A write that reaches past the read index plays its end, on time.
    const int64_t read = s.stream.read_index();
    BOOST_CHECK(s.write_frames(48000 / 2, 3, read + 1000 * kFrame, SeekMode::absolute));
    BOOST_CHECK_GE(s.stream.write_index(), read + 1000 * kFrame);
    BOOST_CHECK_EQUAL(s.stream.write_index() - s.stream.read_index(),
                      static_cast<int64_t>((s.ring.header()->client_pos.load() - 100) * kFrame));
    // Corked, no time goes by.
    StreamOnRing corked(4800, attributes(4800, 960, 0));
    BOOST_CHECK(corked.write_frames(10));
    corked.take(10);
    corked.stream.set_corked(true);
    BOOST_CHECK(corked.stream.take_underflow());
    const int64_t before = corked.stream.read_index();
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    BOOST_CHECK_EQUAL(corked.stream.read_index(), before);
}

BOOST_AUTO_TEST_SUITE_END()
