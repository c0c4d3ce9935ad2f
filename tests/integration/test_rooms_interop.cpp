// Rooms in step with senders that are not audiod: GStreamer's rtpbin and
// ffmpeg's RTP muxer send L24 with RTCP sender reports (RFC 3550), and
// audiod's receivers, which play each frame at the time the reports give
// it plus the link offset, hear them within 100 µs of each other. And
// AES67 (RFC 7273): a stream whose RTP times count the PTP clock is timed
// from its RTP times alone, in step with rooms timed by its reports; and
// rooms whose clocks disagree are brought into step by ptp4l.
#include "house.h"

#include <boost/test/unit_test.hpp>

#include <cctype>
#include <chrono>
#include <csignal>
#include <cstdlib>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>
#include <sys/stat.h>
#include <thread>
#include <tuple>
#include <utility>
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

// A PTP network of namespaces (ptp-network.sh) for one test: its members
// as the script takes them, taken down at the end. `up` is false, and
// the test is skipped with the reason, where the machine refuses
// namespaces.
struct PtpNetwork {
    PtpNetwork(const TempDir& dir, std::vector<std::string> members, const std::string& relay = "")
        : dir(dir) {
        std::vector<std::string> args = {script, "up", dir.path()};
        if (!relay.empty()) {
            args.insert(args.end(), {"--relay", relay});
        }
        args.insert(args.end(), members.begin(), members.end());
        const ProgramResult r = run_program(args, 30s);
        if (r.status == 77) {
            BOOST_WARN_MESSAGE(false, "skipped, the machine refuses: " + r.err);
            return;
        }
        BOOST_REQUIRE_MESSAGE(r.status == 0, r.err);
        up = true;
    }
    ~PtpNetwork() { (void)run_program({script, "down", dir.path()}, 30s); }
    PtpNetwork(const PtpNetwork&) = delete;
    PtpNetwork& operator=(const PtpNetwork&) = delete;

    // Until each slave's ptp4l follows the grandmaster.
    void wait(const std::vector<std::string>& names) const {
        std::vector<std::string> args = {script, "wait", dir.path()};
        args.insert(args.end(), names.begin(), names.end());
        const ProgramResult r = run_program(args, 60s);
        BOOST_REQUIRE_MESSAGE(r.status == 0, r.err);
    }
    // `argv` run in member `name`'s namespace.
    [[nodiscard]] std::vector<std::string> in(const std::string& name,
                                              std::vector<std::string> argv) const {
        std::vector<std::string> args = {script, "exec", dir.path(), name};
        args.insert(args.end(), argv.begin(), argv.end());
        return args;
    }
    [[nodiscard]] std::string address(const std::string& name) const {
        std::ifstream in(dir.file(name + ".address"));
        std::string a;
        in >> a;
        return a;
    }
    // The grandmaster's clock identity as a=ts-refclk writes it
    // (8A-DC-88-FF-FE-3F-E3-CD), from ptp4l's "8adc88.fffe.3fe3cd".
    [[nodiscard]] std::string grandmaster() const {
        const ProgramResult r = run_program(
            {installed("pmc"), "-u", "-b", "0", "-s", dir.file("gm.ptp4l"), "GET DEFAULT_DATA_SET"},
            30s);
        const size_t at = r.out.find("clockIdentity");
        BOOST_REQUIRE_MESSAGE(at != std::string::npos, r.out + r.err);
        std::istringstream line(r.out.substr(at + 13));
        std::string dotted, hex, id;
        line >> dotted;
        for (const char c : dotted) {
            if (c != '.') {
                hex += static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
            }
        }
        BOOST_REQUIRE_EQUAL(hex.size(), 16u);
        for (size_t i = 0; i < 16; i += 2) {
            id += (i > 0 ? "-" : "") + hex.substr(i, 2);
        }
        return id;
    }

    const TempDir& dir;
    const std::string script = std::string(AUDIOD_SOURCE_DIR) + "/tests/integration/ptp-network.sh";
    bool up = false;
};

// Waits (up to `limit`) until source `source` says `key`=`value`.
bool wait_for_source_field(const std::string& source, const std::string& key,
                           const std::string& value, std::chrono::seconds limit) {
    const auto until = std::chrono::steady_clock::now() + limit;
    while (source_field(source, key) != value) {
        if (std::chrono::steady_clock::now() > until) {
            return false;
        }
        std::this_thread::sleep_for(50ms);
    }
    return true;
}

} // namespace

BOOST_AUTO_TEST_SUITE(rooms_interop)

BOOST_AUTO_TEST_CASE(a_gstreamer_sender_with_sender_reports_is_played_in_step) {
    TempDir dir;
    House house(dir, {{"kitchen", -100}, {"hall", 100}}, "l24");
    house.own_sender = false;
    const std::vector<std::string> probe = probe_player(dir, 8);
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
    const std::vector<std::string> probe = probe_player(dir, 8);
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
    const ProgramResult played = run_program(probe_player(dir, 8), 120s);
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

// The rig of the issue, across network namespaces (ptp-network.sh): the
// sender, an audiod with ptp4l as grandmaster, in one; each room an audiod
// of its own in another, hearing the multicast stream through a seeded
// relay that loses 1 % of packets, two at a time on average
// (Gilbert-Elliott), and delays them by up to 1 ms, its sink
// clock -100, +100 or 0 ppm off. All share this machine's one clock, so
// each room's disagreement is made twice: its wall clock is taken to read
// ahead (reference-offset-us: kitchen 2 ms, hall -1.5 ms) and its ptp4l
// measures as much, through a path asymmetry. The rooms that follow their
// ptp4l (option ptp4l) play within 100 µs of each other; the porch, as
// far off as the kitchen but with no ptp4l to follow, plays 2 ms early:
// the correction is what brings the others into step.
BOOST_AUTO_TEST_CASE(rooms_of_their_own_whose_clocks_disagree_follow_ptp4l_into_step) {
    TempDir dir;
    // PTP crosses a bad network too: each room's ptp4l hears the
    // grandmaster through a relay that loses 1 % and delays up to 1 ms, as
    // a PTP-aware switch does (a transparent clock: the time it held each
    // Sync and Delay_Req is in the message's correction). Through a plain
    // one a free-running ptp4l's offsets wander as the delay does
    // (doc/rooms.md, "PTP across a network that is not PTP-aware").
    PtpNetwork network(dir, {"gm", "kitchen:2000", "hall:-1500", "study:0", "porch:-"},
                       bin("audiod-ptp-relay") + " --loss 1 --jitter-us 1000 --transparent-clock");
    if (!network.up) {
        return;
    }
    network.wait({"kitchen", "hall", "study"});
    const std::vector<std::tuple<std::string, int, int>> rooms = {
        {"kitchen", -100, 2000}, {"hall", 100, -1500}, {"study", 0, 0}, {"porch", 50, 2000}};
    House all(dir, {{"kitchen", -100}, {"hall", 100}, {"study", 0}, {"porch", 50}}, "l24");
    // The rooms' servers, each in its namespace with its relay.
    std::vector<std::unique_ptr<House>> houses;
    std::vector<std::unique_ptr<BackgroundProgram>> relays;
    std::vector<std::unique_ptr<ServerProcess>> servers;
    unsigned seed = 1;
    for (const auto& [name, ppm, offset_us] : rooms) {
        auto house = std::make_unique<House>(
            dir, std::vector<std::pair<std::string, int>>{{name, ppm}}, "l24");
        house->own_sender = false;
        house->group = all.group;
        house->port = all.port;
        const uint16_t local = free_udp_port_pair();
        house->networks[name] = local;
        house->receiver_extra[name] =
            "media-clock=direct reference-offset-us=" + std::to_string(offset_us) +
            (name == "porch" ? "" : " ptp4l=" + dir.file(name + ".ptp4l"));
        relays.push_back(std::make_unique<BackgroundProgram>(
            network.in(name, {bin("audiod-udp-relay"), "--group", all.group, "--listen",
                              std::to_string(all.port), "--to",
                              "127.0.0.1:" + std::to_string(local), "--loss", "1", "--burst-length",
                              "2", "--jitter-ms", "1", "--seed", std::to_string(seed++)})));
        const std::string server_dir = dir.file(name + "-server");
        ::mkdir(server_dir.c_str(), 0700);
        servers.push_back(
            std::make_unique<ServerProcess>(house->config(), server_dir, network.in(name, {})));
        if (name != "porch") {
            BOOST_REQUIRE_MESSAGE(
                wait_for_source_field("rx-" + name, "ptp4l-state", "following", 20s),
                run_tool("audioctl", {"list", "sources"}).out);
        }
        houses.push_back(std::move(house));
    }
    // A few answers behind each (a ptp4l just calibrating may say one far
    // off first, which a room steps to and back from).
    for (size_t i = 0; i < servers.size(); ++i) {
        const std::string& name = std::get<0>(rooms[i]);
        if (name == "porch") {
            continue;
        }
        ::setenv("AUDIOD_SOCKET", servers[i]->socket().c_str(), 1);
        const std::string rx = "rx-" + name;
        BOOST_REQUIRE(eventually([&] { return source_number(rx, "ptp4l-answers") >= 5; }, 30s));
    }
    // The sender, in the grandmaster's namespace; the probe plays there.
    House sender(dir, {}, "l24");
    sender.group = all.group;
    sender.port = all.port;
    sender.sender_extra = "aes67=true ptp4l=" + dir.file("gm.ptp4l");
    const std::string sender_dir = dir.file("sender-server");
    ::mkdir(sender_dir.c_str(), 0700);
    ServerProcess sending(sender.config(), sender_dir, network.in("gm", {}));
    BOOST_CHECK_EQUAL(sink_field("net", "ptp4l-state"), "grandmaster");
    const ProgramResult played = run_program(probe_player(dir, 11), 120s);
    BOOST_REQUIRE_MESSAGE(played.status == 0, played.err);
    for (size_t i = 0; i < houses.size(); ++i) {
        ::setenv("AUDIOD_SOCKET", servers[i]->socket().c_str(), 1);
        wait_until_rooms_heard(*houses[i]);
        const std::string& name = std::get<0>(rooms[i]);
        const int offset_us = std::get<2>(rooms[i]);
        BOOST_TEST_MESSAGE(run_tool("audioctl", {"list", "sources"}).out);
        if (name != "porch") {
            // ptp4l measured the room about as far off as it was made.
            const std::string field = source_field("rx-" + name, "ptp4l-offset-ns");
            BOOST_CHECK_MESSAGE(!field.empty() &&
                                    std::abs(std::stoll(field) / 1000 - offset_us) < 100,
                                name << ": ptp4l-offset-ns=" << field);
        }
        BOOST_REQUIRE_EQUAL(servers[i]->stop(SIGTERM), 0);
    }
    BOOST_REQUIRE_EQUAL(sending.stop(SIGTERM), 0);

    // From 4 s: a room that starts a few hundred µs off comes into step
    // (within the 5 s) with an overshoot of some tens of µs that
    // takes a second or two more to die away.
    const std::string out = all.measure(4);
    for (const auto& [name, ppm, offset_us] : rooms) {
        BOOST_TEST_MESSAGE(json_line(out, "{\"room\":\"" + name + "\""));
        BOOST_CHECK_MESSAGE(json_line(out, "{\"room\":\"" + name + "\"").find("\"heard\":true") !=
                                std::string::npos,
                            name);
    }
    check_pairs_in_step(out, 500, {"kitchen-hall", "kitchen-study", "hall-study"});
    const After porch = series_after(out, "kitchen-porch", 2);
    BOOST_CHECK_MESSAGE(porch.points > 500 && porch.max_us > 1800 && porch.settled_s < 0,
                        "kitchen-porch: " << porch.max_us << " us at most");
}

// GStreamer as a room (audiod-gst-ptp-receiver: rtpjitterbuffer
// rfc7273-sync=true, its own PTP client, GstPtpClock, in a namespace of
// its own on the PTP network) plays audiod's AES67 stream, named for the
// grandmaster in a=ts-refclk, within 1 ms of audiod's rooms: the kitchen,
// whose clock is 2 ms off and follows its ptp4l, and the hall.
BOOST_AUTO_TEST_CASE(a_gstreamer_room_with_its_own_ptp_client_plays_in_step) {
    TempDir dir;
    PtpNetwork network(dir, {"gm", "kitchen:2000", "gst:-"});
    if (!network.up) {
        return;
    }
    network.wait({"kitchen"});
    House house(dir, {{"kitchen", -100}, {"hall", 100}}, "l24");
    const std::string refclk = "ptp=IEEE1588-2008:" + network.grandmaster() + ":0";
    house.sender_extra =
        "aes67=true ptp-grandmaster=" + network.grandmaster() + " ptp4l=" + dir.file("gm.ptp4l");
    house.receiver_extra["kitchen"] =
        "media-clock=direct ptp4l=" + dir.file("kitchen.ptp4l") + " reference-offset-us=2000";
    house.receiver_extra["hall"] = "media-clock=direct";
    house.also_measured.push_back("gstreamer=" + dir.file("gstreamer.wav") + "," +
                                  dir.file("gstreamer.times"));
    // GStreamer in its namespace hears the stream through a relay from
    // the group to its address.
    const uint16_t gst_port = free_udp_port_pair();
    BackgroundProgram gstreamer(network.in(
        "gst", {bin("audiod-gst-ptp-receiver"), "--port", std::to_string(gst_port), "--refclk",
                refclk, "--latency-ms", std::to_string(House::kLinkOffsetMs), "--wav",
                dir.file("gstreamer.wav"), "--times", dir.file("gstreamer.times"), "--seconds",
                "60", "--ready", dir.file("gstreamer.ready")}));
    BackgroundProgram relay({bin("audiod-udp-relay"), "--group", house.group, "--listen",
                             std::to_string(house.port), "--to",
                             network.address("gst") + ":" + std::to_string(gst_port)});
    ServerProcess server(house.config());
    BOOST_REQUIRE(wait_for_source_field("rx-kitchen", "ptp4l-state", "following", 20s));
    const auto until = std::chrono::steady_clock::now() + 60s;
    while (!std::ifstream(dir.file("gstreamer.ready")) &&
           std::chrono::steady_clock::now() < until) {
        std::this_thread::sleep_for(50ms);
    }
    BOOST_REQUIRE_MESSAGE(std::ifstream(dir.file("gstreamer.ready")).good(),
                          "GStreamer's PTP clock did not synchronise");
    const ProgramResult played = run_program(probe_player(dir, 8), 120s);
    BOOST_REQUIRE_MESSAGE(played.status == 0, played.err);
    wait_until_rooms_heard(house);
    const ProgramResult heard = gstreamer.finish(60s); // ends 2 s after the stream
    BOOST_TEST_MESSAGE(heard.out + heard.err);
    BOOST_REQUIRE_MESSAGE(heard.status == 0, heard.out + heard.err);
    ::kill(relay.pid(), SIGTERM);
    (void)relay.finish(10s);
    BOOST_REQUIRE_EQUAL(server.stop(SIGTERM), 0);

    const std::string out = house.measure(2);
    for (const char* name : {"kitchen", "hall", "gstreamer"}) {
        const std::string line = json_line(out, "{\"room\":\"" + std::string(name) + "\"");
        BOOST_TEST_MESSAGE(line);
        BOOST_CHECK_MESSAGE(line.find("\"heard\":true") != std::string::npos, line);
    }
    check_pairs_in_step(out, 500, {"kitchen-hall"});
    for (const char* pair : {"kitchen-gstreamer", "hall-gstreamer"}) {
        const std::string line = json_line(out, "{\"pair\":\"" + std::string(pair) + "\"");
        BOOST_TEST_MESSAGE(line);
        BOOST_CHECK_GE(json_number(line, "points").value_or(0), 500u);
        BOOST_CHECK_MESSAGE(json_real(line, "p999_us").value_or(1e9) <= 1000, line);
    }
}

BOOST_AUTO_TEST_SUITE_END()
