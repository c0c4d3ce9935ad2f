// The timer clock's arithmetic: deadlines from frame counts, exactly; and
// what it does after a late cycle.
#include "timer_clock.h"

#include <boost/test/unit_test.hpp>

#include <chrono>
#include <thread>

using audiod::TimerClock;
using AfterXrun = TimerClock::AfterXrun;

namespace {

double now_s() {
    timespec t{};
    clock_gettime(CLOCK_MONOTONIC, &t);
    return static_cast<double>(t.tv_sec) + static_cast<double>(t.tv_nsec) / 1e9;
}

} // namespace

BOOST_AUTO_TEST_SUITE(timer_clock)

BOOST_AUTO_TEST_CASE(frames_to_ns_is_exact_and_does_not_drift) {
    BOOST_CHECK_EQUAL(TimerClock::frames_to_ns(48000, 48000), 1'000'000'000);
    BOOST_CHECK_EQUAL(TimerClock::frames_to_ns(256, 48000), 5'333'333);
    // A year of 44.1 kHz audio lands on the exact second.
    const uint64_t year = 365ull * 24 * 3600;
    BOOST_CHECK_EQUAL(TimerClock::frames_to_ns(44100 * year, 44100),
                      static_cast<int64_t>(year) * 1'000'000'000);
    // The error of any deadline is under one nanosecond: summing periods
    // would have accumulated 1/3 ns per 256-frame cycle instead.
    const uint64_t cycles = 10'000'000;
    const int64_t ns = TimerClock::frames_to_ns(cycles * 256, 48000);
    const long double exact = static_cast<long double>(cycles) * 256 * 1e9L / 48000;
    BOOST_CHECK_LT(std::abs(static_cast<long double>(ns) - exact), 1.0L);
}

BOOST_AUTO_TEST_CASE(waits_follow_absolute_deadlines) {
    TimerClock clock(48000, 480, AfterXrun::restart); // 10 ms quanta
    clock.start();
    timespec start{};
    clock_gettime(CLOCK_MONOTONIC, &start);
    for (int i = 0; i < 11; ++i) {
        BOOST_REQUIRE_EQUAL(clock.wait(), 0);
    }
    timespec end{};
    clock_gettime(CLOCK_MONOTONIC, &end);
    const double elapsed = (end.tv_sec - start.tv_sec) + (end.tv_nsec - start.tv_nsec) / 1e9;
    // The 11th wait returns at 100 ms; allow generous scheduling noise above.
    BOOST_CHECK_GE(elapsed, 0.0999);
    BOOST_CHECK_LT(elapsed, 2.0);
}

// The checks below bound times from below (a loaded machine can only make
// a wait longer) and count xruns from just before the late cycle, except
// the catch-up bound, which leaves 90 ms for three waits that do not sleep.

BOOST_AUTO_TEST_CASE(a_card_clock_restarts_its_timeline_after_a_late_cycle) {
    TimerClock clock(48000, 4800, AfterXrun::restart); // 100 ms quanta
    clock.start();
    BOOST_REQUIRE_EQUAL(clock.wait(), 0); // due at once
    const uint64_t xruns = clock.xruns();
    std::this_thread::sleep_for(std::chrono::milliseconds(310));
    BOOST_REQUIRE_EQUAL(clock.wait(), 0); // 210 ms late: an xrun, runs now
    const double late_cycle = now_s();
    BOOST_CHECK_EQUAL(clock.xruns(), xruns + 1);
    // The deadlines missed are not made up: each next cycle is a whole
    // quantum after the one before, counted from the late one.
    BOOST_REQUIRE_EQUAL(clock.wait(), 0);
    BOOST_CHECK_GE(now_s() - late_cycle, 0.0999);
    BOOST_REQUIRE_EQUAL(clock.wait(), 0);
    BOOST_CHECK_GE(now_s() - late_cycle, 0.1999);
}

BOOST_AUTO_TEST_CASE(a_network_clock_catches_up_after_a_late_cycle) {
    TimerClock clock(48000, 2400, AfterXrun::catch_up); // 50 ms quanta
    clock.start();
    const double start = now_s();
    BOOST_REQUIRE_EQUAL(clock.wait(), 0); // due at once
    const uint64_t xruns = clock.xruns();
    // 110 ms late for the next (well under the 250 ms past which even a
    // catching-up clock restarts).
    std::this_thread::sleep_for(std::chrono::milliseconds(160));
    // Due at 50, 100 and 150 ms: all three run at once (a restarted
    // timeline would put the third 100 ms after the first).
    const double late = now_s();
    for (int i = 0; i < 3; ++i) {
        BOOST_REQUIRE_EQUAL(clock.wait(), 0);
    }
    BOOST_CHECK_LT(now_s() - late, 0.09);
    BOOST_CHECK_EQUAL(clock.xruns(), xruns + 1); // one late episode
    // Then the timeline goes on where it was: the next is due at 200 ms.
    BOOST_REQUIRE_EQUAL(clock.wait(), 0);
    BOOST_CHECK_GE(now_s() - start, 0.1999);
}

BOOST_AUTO_TEST_SUITE_END()
