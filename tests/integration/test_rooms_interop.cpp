// Rooms in step with senders that are not audiod: GStreamer's rtpbin and
// ffmpeg's RTP muxer send L24 with RTCP sender reports (RFC 3550), and
// audiod's receivers, which play each frame at the time the reports give
// it plus the link offset, hear them within 100 µs of each other.
#include "house.h"

#include <boost/test/unit_test.hpp>

#include <csignal>
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
    const ProgramResult sent = run_program(sender, 120s);
    BOOST_REQUIRE_MESSAGE(sent.status == 0, sent.err);
    wait_until_rooms_heard(house);
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

BOOST_AUTO_TEST_SUITE_END()
