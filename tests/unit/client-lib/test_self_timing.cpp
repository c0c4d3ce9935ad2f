// When a self-timed writer looks at its ring again: just after the cycle
// that frees what it waits for (its threshold, or the queue falling below
// two cycles' worth, as the server's own rule), a quarter period later
// each time the server is late, and never by its own clock once the server
// has not cycled for several periods.
#include "self_timing.h"

#include <boost/test/unit_test.hpp>

using audiod::client::self_timed_wake_ns;
using audiod::client::SelfTimingInput;

namespace {

constexpr uint64_t kT0 = 5'000'000'000;                            // the last cycle's start
constexpr uint64_t kPeriod = uint64_t{64} * 1'000'000'000 / 48000; // quantum 64 at 48 kHz
constexpr uint64_t kMargin = kPeriod / 4;

// A full ring of `capacity` frames at 48 kHz, looked at `after` ns past kT0.
SelfTimingInput full_ring(uint64_t capacity, uint64_t threshold, uint64_t after) {
    SelfTimingInput in;
    in.now_ns = kT0 + after;
    in.cycle_time_ns = kT0;
    in.cycle_period_ns = kPeriod;
    in.rate = 48000;
    in.queued = capacity;
    in.capacity = capacity;
    in.wake_threshold = threshold;
    return in;
}

} // namespace

BOOST_AUTO_TEST_SUITE(self_timing)

BOOST_AUTO_TEST_CASE(a_small_ring_looks_again_just_after_the_next_cycle) {
    // 3 ms at 48 kHz with half the ring as threshold: the next cycle leaves
    // 80 frames, under two cycles' worth.
    BOOST_CHECK_EQUAL(self_timed_wake_ns(full_ring(144, 72, 100'000)), kT0 + kPeriod + kMargin);
}

BOOST_AUTO_TEST_CASE(a_large_ring_sleeps_until_its_threshold_is_free) {
    // 100 ms: 2400 frames free after ceil(2400 / 64) = 38 cycles, long before
    // the queue runs low.
    BOOST_CHECK_EQUAL(self_timed_wake_ns(full_ring(4800, 2400, 100'000)),
                      kT0 + 38 * kPeriod + kMargin);
    // A threshold of one frame: the next cycle.
    BOOST_CHECK_EQUAL(self_timed_wake_ns(full_ring(4800, 1, 100'000)), kT0 + kPeriod + kMargin);
}

BOOST_AUTO_TEST_CASE(a_partly_drained_ring_counts_what_is_still_queued) {
    // 180 of 4800 queued, threshold 4700: 80 more to free, two cycles; but
    // the queue falls below 128 after the first.
    SelfTimingInput in = full_ring(4800, 4700, 100'000);
    in.queued = 180;
    BOOST_CHECK_EQUAL(self_timed_wake_ns(in), kT0 + kPeriod + kMargin);
}

BOOST_AUTO_TEST_CASE(a_resampled_stream_counts_cycles_in_its_own_frames) {
    // 44.1 kHz into a 48 kHz sink: a cycle takes 58.8 of its frames, so 600
    // frames free takes 11 cycles (it would take 10 at 64).
    SelfTimingInput in = full_ring(4410, 600, 100'000);
    in.rate = 44100;
    BOOST_CHECK_EQUAL(self_timed_wake_ns(in), kT0 + 11 * kPeriod + kMargin);
}

BOOST_AUTO_TEST_CASE(a_late_cycle_is_looked_for_a_margin_at_a_time_then_signalled) {
    // Woken at its time, the cycle had not come: a margin later, not a
    // period (which would spend a cycle of the writer's slack).
    BOOST_CHECK_EQUAL(self_timed_wake_ns(full_ring(144, 72, kPeriod + kMargin + 10)),
                      kT0 + kPeriod + 2 * kMargin);
    BOOST_CHECK_EQUAL(self_timed_wake_ns(full_ring(144, 72, kPeriod + 3 * kMargin + 10)),
                      kT0 + kPeriod + 4 * kMargin);
    // Three periods late: the server has stopped taking from the ring; the
    // writer waits for its signal, without a clock of its own.
    BOOST_CHECK_EQUAL(self_timed_wake_ns(full_ring(144, 72, 4 * kPeriod)), 0u);
    BOOST_CHECK_EQUAL(self_timed_wake_ns(full_ring(144, 72, 3'600'000'000'000)), 0u);
}

BOOST_AUTO_TEST_CASE(no_published_cycle_means_no_clock_of_its_own) {
    SelfTimingInput in = full_ring(144, 72, 100'000);
    in.cycle_time_ns = 0; // prebuffering, or a server that never took a frame
    BOOST_CHECK_EQUAL(self_timed_wake_ns(in), 0u);
    in = full_ring(144, 72, 100'000);
    in.cycle_period_ns = 0;
    BOOST_CHECK_EQUAL(self_timed_wake_ns(in), 0u);
}

BOOST_AUTO_TEST_SUITE_END()
