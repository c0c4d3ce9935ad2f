// The receivers an RTP sink lists from their reports: each by its name,
// its playout if it sent one, a hostile name made harmless, at most
// kMax kept, and one silent for kForgetNs forgotten.
#include "receiver_table.h"

#include <boost/test/unit_test.hpp>

#include <string>

using namespace audiod::rtp;

namespace {

RtcpSummary report_of(uint32_t ssrc, const std::string& name, const PlayoutReport* play) {
    ReceiverReport r;
    r.ssrc = ssrc;
    r.jitter = 48; // 1 ms at 48 kHz
    r.fraction_lost = 128;
    uint8_t out[kMaxRtcpSize];
    const size_t size = write_receiver_report(r, name, play, out);
    RtcpSummary s;
    BOOST_REQUIRE(parse_rtcp({out, size}, s));
    return s;
}

std::string describe(const ReceiverTable& table, int64_t now) {
    char text[4096];
    const size_t n = table.describe(text, sizeof text, now);
    return std::string(text, n);
}

} // namespace

BOOST_AUTO_TEST_SUITE(receiver_table)

BOOST_AUTO_TEST_CASE(receivers_are_listed_by_name_with_their_playout) {
    ReceiverTable table;
    BOOST_CHECK_EQUAL(describe(table, 0), "");
    PlayoutReport play;
    play.timed = true;
    play.clock = 1;
    play.sync_error_us = 0.4;
    play.realigns = 2;
    play.link_offset_ms = 150;
    table.take_rt(report_of(1, "kitchen", &play), 1'000'000'000, 48000);
    table.take_rt(report_of(2, "bad\nname=x;y", nullptr), 1'500'000'000, 48000);
    const std::string text = describe(table, 2'000'000'000);
    BOOST_TEST_MESSAGE(text);
    BOOST_CHECK_NE(text.find("receivers=kitchen,bad_name_x_y\n"), std::string::npos);
    BOOST_CHECK_NE(text.find(std::string("receiver-fields=") + ReceiverTable::kFields + "\n"),
                   std::string::npos);
    BOOST_CHECK_NE(text.find("receiver.kitchen=yes;rtcp;0.4;2;150;0;50.0;1.00;1.0\n"),
                   std::string::npos);
    BOOST_CHECK_NE(text.find("receiver.bad_name_x_y=-;-;-;-;-;-;50.0;1.00;0.5\n"),
                   std::string::npos);
    // Silent for kForgetNs: gone.
    BOOST_CHECK_EQUAL(describe(table, 1'500'000'000 + ReceiverTable::kForgetNs), "");
}

BOOST_AUTO_TEST_CASE(a_full_table_keeps_those_still_reporting) {
    ReceiverTable table;
    for (uint32_t i = 0; i < ReceiverTable::kMax + 4; ++i) {
        table.take_rt(report_of(100 + i, "room" + std::to_string(i), nullptr), 1'000'000'000,
                      48000);
    }
    const std::string text = describe(table, 1'000'000'000);
    BOOST_CHECK_NE(text.find("room15"), std::string::npos);
    BOOST_CHECK_EQUAL(text.find("room16"), std::string::npos);
    // Once the first have been silent long enough, a new one takes a place.
    table.take_rt(report_of(999, "late", nullptr), 1'000'000'000 + ReceiverTable::kForgetNs, 48000);
    BOOST_CHECK_NE(describe(table, 1'000'000'000 + ReceiverTable::kForgetNs).find("late"),
                   std::string::npos);
}

BOOST_AUTO_TEST_SUITE_END()
