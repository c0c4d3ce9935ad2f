// The timer clock's arithmetic: deadlines from frame counts, exactly.
#include "timer_clock.h"

#include <boost/test/unit_test.hpp>

using audiod::TimerClock;

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
    TimerClock clock(48000, 480); // 10 ms quanta
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

BOOST_AUTO_TEST_SUITE_END()
