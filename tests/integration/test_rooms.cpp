// The multi-room rig's own parts, through the real server: sinks whose
// clocks are set apart (clock-ppm) and that say when each frame played
// (play-times), measured by audiod-sync-probe.
#include "helpers.h"

#include <boost/test/unit_test.hpp>

#include <csignal>

using namespace audiod;
using namespace audiod::test;
using namespace std::chrono_literals;

BOOST_AUTO_TEST_SUITE(rooms)

// Two rooms on one machine, one 100 ppm slow and one 100 ppm fast, each
// playing the probe: the measurement sees them drift apart by 200 µs a
// second and hear every sample once.
BOOST_AUTO_TEST_CASE(rooms_on_clocks_200_ppm_apart_are_measured_drifting_200_ppm) {
    TempDir dir;
    const auto room = [&](const std::string& name, int ppm) {
        return "[sinks." + name + "]\ntype = \"file\"\nformat = \"f32le\"\npath = \"" +
               dir.file(name + ".wav") + "\"\nplay-times = \"" + dir.file(name + ".times") +
               "\"\nclock-ppm = " + std::to_string(ppm) + "\n";
    };
    ServerProcess server("[server]\nrt-priority = 0\nquantum = 480\n" + room("slow", -100) +
                         room("fast", 100));
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
        BOOST_CHECK_EQUAL(json_number(line, "first_index").value_or(1), 0u);
        BOOST_CHECK_EQUAL(json_number(line, "discontinuities").value_or(1), 0u);
        BOOST_CHECK_GE(json_number(line, "frames").value_or(0), 6u * 48000 - 10);
    }
    // The fast room plays each sample earlier than the slow one by 200 µs
    // more every second (1/0.9999 − 1/1.0001 of a second a second).
    const auto drift = json_real(out.substr(pair_line), "drift_ppm");
    BOOST_REQUIRE(drift);
    BOOST_CHECK_CLOSE(*drift, 1e6 * (1 / 0.9999 - 1 / 1.0001) / (1 / 0.9999), 2.0);
}

BOOST_AUTO_TEST_SUITE_END()
