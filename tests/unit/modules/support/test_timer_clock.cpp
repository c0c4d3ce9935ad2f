// The timer clock's arithmetic: deadlines from frame counts, exactly; what
// it does after a late cycle; and a clock set off its rate by a drift.
#include "timer_clock.h"

#include <boost/test/unit_test.hpp>

#include <chrono>
#include <cmath>
#include <string>
#include <thread>
#include <variant>
#include <vector>

using audiod::TimerClock;
using AfterXrun = TimerClock::AfterXrun;

namespace {

int64_t now_ns() {
    timespec t{};
    clock_gettime(CLOCK_MONOTONIC, &t);
    return int64_t{t.tv_sec} * 1'000'000'000 + t.tv_nsec;
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

// The cases below read where the clock's timeline stands after a late
// cycle (next_due_ns) rather than time its waits: a loaded machine can make
// any wait longer. A sleep of at least 30 ms makes the next cycle more than
// a 10 ms quantum late whatever the load (held past the 250 ms after which
// even a catching-up clock restarts, the catch-up case has nothing to show).

BOOST_AUTO_TEST_CASE(a_card_clock_restarts_its_timeline_after_a_late_cycle) {
    TimerClock clock(48000, 480, AfterXrun::restart); // 10 ms quanta
    const int64_t quantum_ns = TimerClock::frames_to_ns(480, 48000);
    clock.start();
    BOOST_REQUIRE_EQUAL(clock.wait(), 0); // due at once
    const uint64_t xruns = clock.xruns();
    std::this_thread::sleep_for(std::chrono::milliseconds(30));
    const int64_t before_late_cycle = now_ns();
    BOOST_REQUIRE_EQUAL(clock.wait(), 0); // an xrun: runs now
    BOOST_CHECK_EQUAL(clock.xruns(), xruns + 1);
    // The deadlines missed are not made up: the next cycle is a whole
    // quantum after the late one.
    BOOST_CHECK_GE(clock.next_due_ns(), before_late_cycle + quantum_ns);
    BOOST_REQUIRE_EQUAL(clock.wait(), 0);
    BOOST_CHECK_GE(now_ns(), before_late_cycle + quantum_ns);
}

BOOST_AUTO_TEST_CASE(a_network_clock_catches_up_after_a_late_cycle) {
    TimerClock clock(48000, 480, AfterXrun::catch_up); // 10 ms quanta
    const int64_t quantum_ns = TimerClock::frames_to_ns(480, 48000);
    clock.start();
    BOOST_REQUIRE_EQUAL(clock.wait(), 0); // due at once
    const int64_t late_due = clock.next_due_ns();
    const uint64_t xruns = clock.xruns();
    std::this_thread::sleep_for(std::chrono::milliseconds(30));
    if (now_ns() - late_due > TimerClock::kMaxLateNs - 50'000'000) {
        // Held so long that any clock restarts: nothing to see here.
        BOOST_TEST_MESSAGE("this thread was held past the catch-up limit; not checked");
        return;
    }
    // The late cycle and the ones after it keep their places on the
    // timeline (each wait returns at once until it has caught up).
    for (int64_t k = 1; k <= 3; ++k) {
        BOOST_REQUIRE_EQUAL(clock.wait(), 0);
        BOOST_CHECK_EQUAL(clock.next_due_ns(), late_due + k * quantum_ns);
    }
    // One late episode, one xrun (the first wait may have begun it, if
    // this thread was held before it).
    BOOST_CHECK_GE(clock.xruns(), 1u);
    BOOST_CHECK_LE(clock.xruns(), xruns + 1);
}

BOOST_AUTO_TEST_CASE(a_drifting_clock_takes_its_frames_at_the_rate_it_is_set_to) {
    // 1 % slow (the largest error allowed), 100 ms quanta: 12 cycles span a
    // segment boundary at a second. Each deadline lies where 48000 × 0.99
    // frames a second put it.
    TimerClock clock(48000, 4800, AfterXrun::restart, audiod::ClockDrift{.ppm = -10000});
    clock.start();
    BOOST_REQUIRE_EQUAL(clock.wait(), 0);
    const int64_t start = clock.cycle_due_ns();
    for (int k = 1; k <= 12; ++k) {
        BOOST_REQUIRE_EQUAL(clock.wait(), 0);
        if (clock.restarts() != 0) {
            BOOST_TEST_MESSAGE("this thread was held past a quantum; the timeline restarted");
            return;
        }
        const double expected = k * 4800 * 1e9 / (48000 * 0.99);
        BOOST_CHECK_LT(std::abs(static_cast<double>(clock.cycle_due_ns() - start) - expected), 2.0);
    }
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_AUTO_TEST_SUITE(clock_drift)

BOOST_AUTO_TEST_CASE(the_speed_is_the_error_plus_a_sine_of_wander) {
    const audiod::ClockDrift drift{.ppm = 100, .wander_ppm = 20, .wander_seconds = 40};
    BOOST_CHECK_CLOSE(drift.speed_at(0), 1.0001, 1e-9);
    BOOST_CHECK_CLOSE(drift.speed_at(10), 1.00012, 1e-9);
    BOOST_CHECK_CLOSE(drift.speed_at(30), 1.00008, 1e-9);
    BOOST_CHECK(audiod::ClockDrift{}.none());
    BOOST_CHECK(!drift.none());
}

BOOST_AUTO_TEST_CASE(the_options_are_read_and_bad_ones_named) {
    auto read = [](std::vector<audiod_option> options) {
        audiod_device_config config{};
        config.options = options.data();
        config.option_count = options.size();
        return audiod::read_clock_drift(audiod::DeviceOptions(config));
    };
    const auto good = read({{"clock-ppm", "-100.5"}, {"clock-wander-ppm", "3"}});
    BOOST_REQUIRE(std::holds_alternative<audiod::ClockDrift>(good));
    BOOST_CHECK_EQUAL(std::get<audiod::ClockDrift>(good).ppm, -100.5);
    BOOST_CHECK_EQUAL(std::get<audiod::ClockDrift>(good).wander_ppm, 3);
    BOOST_CHECK_EQUAL(std::get<audiod::ClockDrift>(good).wander_seconds, 60);
    for (const char* bad : {"fast", "20000", "1e9", "nan", ""}) {
        const auto refused = read({{"clock-ppm", bad}});
        BOOST_REQUIRE(std::holds_alternative<std::string>(refused));
        BOOST_CHECK_NE(std::get<std::string>(refused).find("clock-ppm"), std::string::npos);
    }
    BOOST_CHECK(std::holds_alternative<std::string>(read({{"clock-wander-seconds", "0"}})));
}

BOOST_AUTO_TEST_SUITE_END()
