// When a sender means its frames to be heard (rtp/sender_clock.h): the
// map its RTCP reports give, fitted through several, a sender whose clock
// runs off its rate followed, a jump in its timeline forgotten; and the
// NTP times the reports carry read back exactly.
#include "rtcp.h"
#include "sender_clock.h"

#include <boost/test/unit_test.hpp>

#include <cmath>

using namespace audiod::rtp;

namespace {

constexpr int64_t kSecond = 1'000'000'000;

} // namespace

BOOST_AUTO_TEST_SUITE(sender_clock)

BOOST_AUTO_TEST_CASE(ntp_times_convert_to_and_from_the_unix_clock_exactly) {
    for (const int64_t ns : {int64_t{0}, int64_t{1}, 1'765'000'000 * kSecond + 123'456'789,
                             1'765'000'000 * kSecond + 999'999'999}) {
        BOOST_CHECK_EQUAL(unix_ns_from_ntp(ntp_from_unix_ns(ns)), ns);
    }
    // 1970 is 2208988800 s after 1900.
    BOOST_CHECK_EQUAL(ntp_from_unix_ns(0) >> 32, 2'208'988'800u);
}

BOOST_AUTO_TEST_CASE(nothing_is_known_before_a_report_and_one_gives_the_nominal_pace) {
    SenderClock clock(48000);
    BOOST_CHECK(!clock.timeline().valid);
    clock.add(48000, 10 * kSecond);
    const SenderTimeline t = clock.timeline();
    BOOST_REQUIRE(t.valid);
    BOOST_CHECK_EQUAL(t.reports, 1u);
    BOOST_CHECK_CLOSE(t.wall_at(96000), 11.0 * kSecond, 1e-9);
    BOOST_CHECK_CLOSE(t.ns_per_frame, 1e9 / 48000, 1e-9);
    clock.clear();
    BOOST_CHECK(!clock.timeline().valid);
}

BOOST_AUTO_TEST_CASE(a_sender_100_ppm_fast_is_followed_once_reports_span_two_seconds) {
    SenderClock clock(48000);
    // It sends 48005 frames each wall-clock second (104 ppm fast); reports
    // a second apart.
    const auto report = [&](int k) { clock.add(int64_t{k} * 48005, (100 + k) * kSecond); };
    report(0);
    report(1);
    BOOST_CHECK_CLOSE(clock.timeline().ns_per_frame, 1e9 / 48000, 1e-9); // too short a span
    for (int k = 2; k < 30; ++k) {
        report(k);
    }
    const SenderTimeline t = clock.timeline();
    BOOST_CHECK_EQUAL(t.reports, SenderClock::kWindow);
    BOOST_CHECK_CLOSE(t.ns_per_frame, 1e9 / 48005, 1e-6);
    // Where the frame 40 s in is due: 140 s on the wall clock, to the microsecond.
    BOOST_CHECK_LT(std::fabs(t.wall_at(40 * 48005) - 140.0 * kSecond), 1000.0);
}

BOOST_AUTO_TEST_CASE(a_jump_in_the_senders_timeline_starts_the_fit_again) {
    SenderClock clock(48000);
    for (int k = 0; k < 5; ++k) {
        clock.add(k * 48000, (100 + k) * kSecond);
    }
    // The RTP time goes back (a sender restarted with the same SSRC).
    clock.add(1000, 106 * kSecond);
    BOOST_CHECK_EQUAL(clock.timeline().reports, 1u);
    // A pace far off the nominal (2 % here, over 3 s) is not believed.
    clock.add(1000 + 3 * 49000, 109 * kSecond);
    const SenderTimeline t = clock.timeline();
    BOOST_CHECK_EQUAL(t.reports, 1u);
    BOOST_CHECK_CLOSE(t.ns_per_frame, 1e9 / 48000, 1e-9);
    BOOST_CHECK_CLOSE(t.wall_at(1000 + 3 * 49000), 109.0 * kSecond, 1e-9);
}

BOOST_AUTO_TEST_SUITE_END()
