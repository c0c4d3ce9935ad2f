// The clock follower, simulated: a sender whose clock is off by up to 0.3 %
// is learnt to within 100 ppm (inside its dead band the loop lets the ratio
// rest) with the latency held to a 5 ms range near its target, and two
// clocks that agree are left exactly alone whatever the packets' sawtooth
// and jitter; a fill that jumps moves the ratio by a glide, never a step.
#include "common/clock_follower.h"

#include <boost/test/unit_test.hpp>

#include <algorithm>
#include <cmath>
#include <random>
#include <vector>

using audiod::ClockFollower;

namespace {

struct Run {
    double ratio = 1;
    double min_fill = 1e9;
    double max_fill = -1e9;
};

// Packets of 480 frames from a sender at 48000 * (1 + drift) frames a
// second, arriving with up to `jitter_ms` of delay; a reader consuming 256
// frames a cycle at 48000 frames a second times the follower's ratio.
// Returns the final ratio and the fill range over the last `watch` seconds.
Run simulate(double drift, double jitter_ms, double seconds, double watch) {
    const double rate = 48000;
    const double target = 40 * 48; // 40 ms
    ClockFollower follower(48000, target);
    follower.set_packet(480);
    std::mt19937 rng(3);
    std::uniform_real_distribution<double> delay(0, jitter_ms / 1000);
    double next_send = 0;
    double arrived = 0; // frames
    std::vector<double> arrivals;
    double consumed = -target - 240; // the reader starts the target behind
    Run run;
    for (double t = 0; t < seconds; t += 256 / rate) {
        while (next_send <= t + 0.1) { // schedule packets ahead
            arrivals.push_back(next_send + delay(rng));
            next_send += 480 / (rate * (1 + drift));
        }
        std::sort(arrivals.begin(), arrivals.end());
        while (!arrivals.empty() && arrivals.front() <= t) {
            arrived += 480;
            arrivals.erase(arrivals.begin());
        }
        const double fill = arrived - consumed;
        const double ratio = follower.update(fill, 256 * follower.ratio());
        consumed += 256 * ratio;
        if (t > seconds - watch) {
            run.min_fill = std::min(run.min_fill, follower.latency());
            run.max_fill = std::max(run.max_fill, follower.latency());
        }
    }
    run.ratio = follower.ratio();
    return run;
}

} // namespace

BOOST_AUTO_TEST_SUITE(clock_follower)

BOOST_AUTO_TEST_CASE(agreeing_clocks_are_left_alone) {
    for (const double jitter : {0.0, 5.0, 20.0}) {
        const Run run = simulate(0, jitter, 120, 100);
        BOOST_TEST_MESSAGE("jitter " << jitter << " ms: ratio " << run.ratio);
        BOOST_CHECK_EQUAL(run.ratio, 1.0);
    }
}

BOOST_AUTO_TEST_CASE(a_drifting_sender_is_learnt_and_the_latency_held) {
    for (const double drift : {0.001, -0.001, 0.003}) {
        const Run run = simulate(drift, 20, 120, 60);
        const double ppm = (run.ratio - 1 - drift) * 1e6;
        BOOST_TEST_MESSAGE("drift " << drift * 1e6 << " ppm: error " << ppm << " ppm, latency "
                                    << run.min_fill / 48 << " .. " << run.max_fill / 48 << " ms");
        BOOST_CHECK_LE(std::fabs(ppm), 100.0);
        // 20 ms of jitter delays packets by 10 ms on average: the warm-up
        // settles up to half a packet (5 ms) below the target for it.
        BOOST_CHECK_LE(run.max_fill - run.min_fill, 5 * 48.0);
        BOOST_CHECK_GE(run.min_fill / 48, 40 - 8.0);
        BOOST_CHECK_LE(run.max_fill / 48, 40 + 5.0);
    }
}

// A sink held up, a burst of packets, a reset: the fill jumps, and the
// ratio (the pitch) glides instead of stepping.
BOOST_AUTO_TEST_CASE(the_ratio_glides_when_the_fill_jumps) {
    ClockFollower follower(48000, 40 * 48);
    const double cycle = 256;
    const double most = ClockFollower::kMaxSlewPerSecond * cycle / 48000 * (1 + 1e-9);
    double fill = 40 * 48;
    double largest = 0;
    double previous = 1;
    auto run = [&](double seconds) {
        for (double t = 0; t < seconds; t += cycle / 48000) {
            const double ratio = follower.update(fill, cycle);
            largest = std::max(largest, std::fabs(ratio - previous));
            previous = ratio;
        }
    };
    run(5);
    fill += 20 * 48; // 20 ms more at once
    run(5);
    BOOST_CHECK_GT(follower.ratio(), 1.001); // it acts ...
    follower.reset(false);
    fill = 30 * 48;
    run(10);
    BOOST_CHECK_LT(follower.ratio(), 1.0); // ... both ways
    BOOST_TEST_MESSAGE("largest step " << largest * 1e6 << " ppm, allowed " << most * 1e6);
    BOOST_CHECK_LE(largest, most); // ... but never at once
}

BOOST_AUTO_TEST_CASE(the_correction_is_bounded) {
    // A clock 2 % off cannot be followed: the loop stops at its limit.
    const Run run = simulate(0.02, 0, 60, 10);
    BOOST_CHECK_CLOSE(run.ratio, 1 + ClockFollower::kMaxCorrection, 1e-9);
}

BOOST_AUTO_TEST_SUITE_END()
