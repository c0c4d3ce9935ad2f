// Rooms in step with senders that are not audiod: GStreamer's rtpbin and
// ffmpeg's RTP muxer send L24 with RTCP sender reports (RFC 3550), and
// audiod's receivers, which play each frame at the time the reports give
// it plus the link offset, hear them within 100 µs of each other. And
// AES67 (RFC 7273): a stream whose RTP times count the PTP clock is timed
// from its RTP times alone, in step with rooms timed by its reports.
#include "house.h"

#include <boost/test/unit_test.hpp>

#include <csignal>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

using namespace audiod;
using namespace audiod::test;
using namespace std::chrono_literals;

namespace {

// Plays `sender` (which sends the probe to the house's group), waits until
// the rooms heard it, and checks them: every room heard the probe with no
// step, and the rooms are within 100 µs of each other once the sender's
// reports have come (they come every few seconds, not every second).
void check_rooms_of(const House& house, const std::vector<std::string>& sender) {
    ServerProcess server(house.config());
    // Done when the rooms have heard the end: GStreamer's pipeline once
    // did not end at its end of stream on a loaded machine (its RTCP
    // thread waiting on its clock), though it had sent everything.
    BackgroundProgram sending(sender);
    wait_until_rooms_heard(house);
    ::kill(sending.pid(), SIGTERM);
    const ProgramResult sent = sending.finish(30s);
    BOOST_TEST_MESSAGE(sent.err);
    const ProgramResult sources = run_tool("audioctl", {"list", "sources"});
    BOOST_TEST_MESSAGE(sources.out);
    BOOST_CHECK_MESSAGE(sources.out.find("play-timed=yes") != std::string::npos, sources.out);
    BOOST_REQUIRE_EQUAL(server.stop(SIGTERM), 0);

    const std::string out = house.measure(2);
    for (const auto& [name, ppm] : house.rooms) {
        const std::string line = json_line(out, "{\"room\":\"" + name + "\"");
        BOOST_TEST_MESSAGE(line);
        BOOST_CHECK_MESSAGE(line.find("\"heard\":true") != std::string::npos, line);
        BOOST_CHECK_MESSAGE(json_number(line, "discontinuities").value_or(1) == 0, line);
    }
    check_pairs_in_step(out, 300);
}

} // namespace

BOOST_AUTO_TEST_SUITE(rooms_interop)

BOOST_AUTO_TEST_CASE(a_gstreamer_sender_with_sender_reports_is_played_in_step) {
    TempDir dir;
    House house(dir, {{"kitchen", -100}, {"hall", 100}}, "l24");
    house.own_sender = false;
    const std::vector<std::string> probe = probe_player(dir, 12);
    const std::string port = std::to_string(house.port);
    const std::string rtcp = std::to_string(house.port + 1);
    check_rooms_of(house, {installed("gst-launch-1.0"),
                           "-q",
                           "rtpbin",
                           "name=rtp",
                           "filesrc",
                           "location=" + dir.file("probe.wav"),
                           "!",
                           "wavparse",
                           "!",
                           "audioconvert",
                           "!",
                           "audio/x-raw,format=S24BE",
                           "!",
                           "rtpL24pay",
                           "pt=96",
                           "!",
                           "rtp.send_rtp_sink_0",
                           "rtp.send_rtp_src_0",
                           "!",
                           "udpsink",
                           "host=" + house.group,
                           "port=" + port,
                           "auto-multicast=true",
                           "rtp.send_rtcp_src_0",
                           "!",
                           "udpsink",
                           "host=" + house.group,
                           "port=" + rtcp,
                           "sync=false",
                           "async=false"});
}

BOOST_AUTO_TEST_CASE(an_ffmpeg_sender_with_sender_reports_is_played_in_step) {
    TempDir dir;
    House house(dir, {{"kitchen", -100}, {"hall", 100}}, "l24");
    house.own_sender = false;
    const std::vector<std::string> probe = probe_player(dir, 12);
    check_rooms_of(house,
                   {installed("ffmpeg"), "-nostdin", "-loglevel", "error", "-re", "-i",
                    dir.file("probe.wav"), "-c:a", "pcm_s24be", "-payload_type", "96", "-f", "rtp",
                    "rtp://" + house.group + ":" + std::to_string(house.port) + "?ttl=1"});
}

// An AES67 sender (aes67 = true: L24, 1 ms packets, RTP times on the
// PTP clock) describes its clock in its SDP; two rooms read the SDP and
// time the stream by its RTP times (clock-source=ptp), a third by its
// sender reports (rtcp): all three within 100 µs, and the first two from
// the stream's first packet.
BOOST_AUTO_TEST_CASE(an_aes67_stream_is_timed_by_its_rtp_times_alone) {
    TempDir dir;
    House house(dir, {{"kitchen", -100}, {"hall", 100}, {"study", 0}}, "l24");
    const std::string sdp = dir.file("net.sdp");
    house.sender_extra = "aes67=true sdp-file=" + sdp;
    house.receiver_extra["kitchen"] = "sdp-file=" + sdp;
    house.receiver_extra["hall"] = "sdp-file=" + sdp;
    house.receiver_extra["study"] = "media-clock=reports";
    ServerProcess server(house.config());
    std::ifstream in(sdp);
    std::stringstream text;
    text << in.rdbuf();
    BOOST_TEST_MESSAGE(text.str());
    BOOST_CHECK_NE(text.str().find("a=ts-refclk:ptp=IEEE1588-2008:traceable\n"), std::string::npos);
    BOOST_CHECK_NE(text.str().find("a=mediaclk:direct=0\n"), std::string::npos);
    BOOST_CHECK_NE(text.str().find("a=ptime:1\n"), std::string::npos);
    const ProgramResult played = run_program(probe_player(dir, 12), 120s);
    BOOST_REQUIRE_MESSAGE(played.status == 0, played.err);
    wait_until_rooms_heard(house);
    BOOST_CHECK_EQUAL(source_field("rx-kitchen", "clock-source"), "ptp");
    BOOST_CHECK_EQUAL(source_field("rx-hall", "clock-source"), "ptp");
    BOOST_CHECK_EQUAL(source_field("rx-study", "clock-source"), "rtcp");
    BOOST_TEST_MESSAGE(run_tool("audioctl", {"list", "sources"}).out);
    BOOST_REQUIRE_EQUAL(server.stop(SIGTERM), 0);

    const std::string out = house.measure(2);
    for (const auto& [name, ppm] : house.rooms) {
        const std::string line = json_line(out, "{\"room\":\"" + name + "\"");
        BOOST_TEST_MESSAGE(line);
        BOOST_CHECK_MESSAGE(json_number(line, "discontinuities").value_or(1) == 0, line);
        if (name != "study") {
            BOOST_CHECK_MESSAGE(json_number(line, "first_index").value_or(99999) < 480, line);
        }
    }
    check_pairs_in_step(out, 500);
}

BOOST_AUTO_TEST_SUITE_END()
