// Rooms in sync, and the rig's own parts, through the real server: sinks
// whose clocks are set apart (clock-ppm) and that say when each frame
// played (play-times), measured by audiod-sync-probe; and RTP receivers
// with a link offset playing one sender's stream into such rooms, heard
// within 100 µs of each other.
#include "helpers.h"

#include <boost/test/unit_test.hpp>

#include <csignal>
#include <thread>
#include <utility>
#include <vector>

using namespace audiod;
using namespace audiod::test;
using namespace std::chrono_literals;

namespace {

// A room: a file sink with its clock set `ppm` off, writing its audio and
// when it played it.
std::string room_sink(const TempDir& dir, const std::string& name, int ppm) {
    return "[sinks." + name + "]\ntype = \"file\"\nformat = \"f32le\"\npath = \"" +
           dir.file(name + ".wav") + "\"\nplay-times = \"" + dir.file(name + ".times") +
           "\"\nclock-ppm = " + std::to_string(ppm) + "\n";
}

std::string room_measure(const TempDir& dir, const std::string& name) {
    return name + "=" + dir.file(name + ".wav") + "," + dir.file(name + ".times");
}

// The line of `out` that starts with `key`, as audiod-sync-probe --json prints.
std::string json_line(const std::string& out, const std::string& key) {
    const size_t at = out.find(key);
    return at == std::string::npos ? "" : out.substr(at, out.find('\n', at) - at);
}

} // namespace

BOOST_AUTO_TEST_SUITE(rooms)

// Two rooms on one machine, one 100 ppm slow and one 100 ppm fast, each
// playing the probe: the measurement sees them drift apart by 200 µs a
// second and hear every sample once.
BOOST_AUTO_TEST_CASE(rooms_on_clocks_200_ppm_apart_are_measured_drifting_200_ppm) {
    TempDir dir;
    ServerProcess server("[server]\nrt-priority = 0\nquantum = 480\n" +
                         room_sink(dir, "slow", -100) + room_sink(dir, "fast", 100));
    const ProgramResult made =
        run_tool("audiod-sync-probe", {"make", "--seconds", "6", dir.file("probe.wav")});
    BOOST_REQUIRE_MESSAGE(made.status == 0, made.err);
    // A long buffer, so that a loaded machine does not make either player
    // run dry (which would be a gap in what the room heard).
    const auto player = [&](const std::string& sink) {
        return std::vector<std::string>{
            bin("audioplay"),     "--quiet", "--sink", sink, "--latency-ms", "500",
            dir.file("probe.wav")};
    };
    BackgroundProgram slow(player("slow"));
    const ProgramResult fast = run_program(player("fast"), 60s);
    BOOST_REQUIRE_MESSAGE(fast.status == 0, fast.err);
    BOOST_REQUIRE_EQUAL(slow.finish(60s).status, 0);
    BOOST_REQUIRE_EQUAL(server.stop(SIGTERM), 0);

    const ProgramResult measured = run_tool(
        "audiod-sync-probe", {"measure", "--json", "--settle", "0",
                              "slow=" + dir.file("slow.wav") + "," + dir.file("slow.times"),
                              "fast=" + dir.file("fast.wav") + "," + dir.file("fast.times")});
    BOOST_REQUIRE_MESSAGE(measured.status == 0, measured.err);
    BOOST_TEST_MESSAGE(measured.out);
    const std::string& out = measured.out;
    const size_t fast_line = out.find("\"room\":\"fast\"");
    const size_t pair_line = out.find("\"pair\"");
    BOOST_REQUIRE(fast_line != std::string::npos && pair_line != std::string::npos);
    for (const size_t at : {size_t{0}, fast_line}) {
        const std::string line = out.substr(at, out.find('\n', at) - at);
        BOOST_CHECK_MESSAGE(line.find("\"heard\":true") != std::string::npos, line);
        BOOST_CHECK_LE(json_number(line, "first_index").value_or(99), 8u); // the wrap is left out
        BOOST_CHECK_EQUAL(json_number(line, "discontinuities").value_or(1), 0u);
        BOOST_CHECK_GE(json_number(line, "frames").value_or(0), 6u * 48000 - 10);
    }
    // The fast room plays each sample earlier than the slow one by 200 µs
    // more every second (1/0.9999 − 1/1.0001 of a second a second).
    const auto drift = json_real(out.substr(pair_line), "drift_ppm");
    BOOST_REQUIRE(drift);
    BOOST_CHECK_CLOSE(*drift, 1e6 * (1 / 0.9999 - 1 / 1.0001) / (1 / 0.9999), 2.0);
}

// One sender, three receivers with the same link offset, each playing
// into a room whose clock is off by -100, 0 and +100 ppm: once in step
// (within 5 s) every pair hears each sample within 100 µs of the other,
// and no room loses or repeats a sample.
BOOST_AUTO_TEST_CASE(three_receivers_with_one_link_offset_hear_each_sample_within_100_us) {
    TempDir dir;
    const uint16_t port = free_udp_port_pair();
    const std::string group = "239.255.88." + std::to_string(port % 250 + 1);
    std::string config = "[server]\nrt-priority = 0\n\n[sinks.net]\ntype = \"rtp\"\n"
                         "destination = \"" +
                         group + "\"\nport = " + std::to_string(port) + "\npayload = \"l16\"\n\n";
    const std::vector<std::pair<std::string, int>> rooms = {
        {"kitchen", -100}, {"hall", 0}, {"study", 100}};
    for (const auto& [name, ppm] : rooms) {
        config += room_sink(dir, name, ppm) + "\n[sources.rx-" + name +
                  "]\ntype = \"rtp\"\naddress = \"" + group + "\"\nport = " + std::to_string(port) +
                  "\npayload = \"l16\"\nlatency-ms = 30\nlink-offset-ms = 150\nsink = \"" + name +
                  "\"\n\n";
    }
    ServerProcess server(config);
    const ProgramResult made =
        run_tool("audiod-sync-probe", {"make", "--seconds", "12", dir.file("probe.wav")});
    BOOST_REQUIRE_MESSAGE(made.status == 0, made.err);
    const ProgramResult played =
        run_tool("audioplay",
                 {"--quiet", "--sink", "net", "--latency-ms", "500", dir.file("probe.wav")}, 120s);
    BOOST_REQUIRE_MESSAGE(played.status == 0, played.err);
    // Every room has played the end: the sender's last frame plus the
    // link offset, and a margin.
    std::this_thread::sleep_for(1s);
    const ProgramResult sources = run_tool("audioctl", {"list", "sources"});
    BOOST_TEST_MESSAGE(sources.out);
    BOOST_CHECK_MESSAGE(sources.out.find("play-timed=yes") != std::string::npos, sources.out);
    BOOST_REQUIRE_EQUAL(server.stop(SIGTERM), 0);

    std::vector<std::string> args = {"measure", "--json", "--settle", "5", "--bound-us", "100"};
    for (const auto& [name, ppm] : rooms) {
        args.push_back(room_measure(dir, name));
    }
    const ProgramResult measured = run_tool("audiod-sync-probe", args);
    BOOST_REQUIRE_MESSAGE(measured.status == 0, measured.err);
    BOOST_TEST_MESSAGE(measured.out);
    for (const auto& [name, ppm] : rooms) {
        const std::string line = json_line(measured.out, "{\"room\":\"" + name + "\"");
        BOOST_CHECK_MESSAGE(line.find("\"heard\":true") != std::string::npos, line);
        BOOST_CHECK_MESSAGE(json_number(line, "discontinuities").value_or(1) == 0, line);
    }
    for (size_t at = 0; (at = measured.out.find("{\"pair\"", at)) != std::string::npos; ++at) {
        const std::string line = json_line(measured.out.substr(at), "{\"pair\"");
        BOOST_CHECK_GE(json_number(line, "points").value_or(0), 500u);
        BOOST_CHECK_MESSAGE(json_real(line, "p999_us").value_or(1e9) <= 100, line);
        const auto converged = json_real(line, "converged_s");
        BOOST_CHECK_MESSAGE(converged && *converged >= 0 && *converged <= 5, line);
    }
}

BOOST_AUTO_TEST_SUITE_END()
