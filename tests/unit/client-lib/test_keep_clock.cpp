// The clock a stream keeps while no server plays it: consumption at the
// nominal rate, never ahead of what was written, paused when the player
// pauses, exact over days.
#include "keep_clock.h"

#include <boost/test/unit_test.hpp>

using audiod::MonoClock;
using audiod::client::KeepClock;
using namespace std::chrono_literals;

BOOST_AUTO_TEST_SUITE(keep_clock)

BOOST_AUTO_TEST_CASE(consumes_at_the_nominal_rate_from_when_the_server_stopped) {
    const auto t0 = MonoClock::now();
    // The server stopped 300 ms before we noticed: those count too.
    KeepClock clock(t0 - 300ms, 1000, 48000, false);
    BOOST_CHECK_EQUAL(clock.consumed(t0, 1'000'000), 1000u + 14400u);
    BOOST_CHECK_EQUAL(clock.consumed(t0 + 1s, 1'000'000), 1000u + 14400u + 48000u);
}

BOOST_AUTO_TEST_CASE(never_ahead_of_what_was_written_and_owes_nothing_after) {
    const auto t0 = MonoClock::now();
    KeepClock clock(t0, 0, 48000, false);
    BOOST_CHECK_EQUAL(clock.consumed(t0 + 1s, 4800), 4800u); // ran dry at 0.1 s
    // More frames arrive later: they are consumed from now, not at once.
    BOOST_CHECK_EQUAL(clock.consumed(t0 + 1s, 9600), 4800u);
    BOOST_CHECK_EQUAL(clock.consumed(t0 + 1s + 50ms, 9600), 4800u + 2400u);
}

BOOST_AUTO_TEST_CASE(pause_stops_it_and_resume_goes_on) {
    const auto t0 = MonoClock::now();
    KeepClock clock(t0, 0, 48000, false);
    clock.pause(t0 + 100ms, 1'000'000);
    BOOST_CHECK_EQUAL(clock.consumed(t0 + 5s, 1'000'000), 4800u);
    BOOST_CHECK(clock.time_for(100) > 0ns); // a paused clock still lets waiters poll
    clock.resume(t0 + 5s);
    BOOST_CHECK_EQUAL(clock.consumed(t0 + 5s + 100ms, 1'000'000), 9600u);
}

BOOST_AUTO_TEST_CASE(exact_over_days_at_high_rates) {
    const auto t0 = MonoClock::now();
    KeepClock clock(t0, 0, 192000, false);
    const uint64_t three_days = 3ull * 24 * 3600;
    BOOST_CHECK_EQUAL(clock.consumed(t0 + std::chrono::seconds(three_days), ~uint64_t{0}),
                      three_days * 192000);
    BOOST_CHECK(clock.time_for(48000) == 250ms);
}

BOOST_AUTO_TEST_SUITE_END()
