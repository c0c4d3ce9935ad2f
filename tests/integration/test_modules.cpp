// The module loader keeps the ABI's promises (audiod/module.h): a module
// that lacks a required function, claims another ABI, returns no
// descriptor or names another type is refused when loaded, with a message
// saying what is wrong, and the server goes on serving.
#include "audiod/module.h"
#include "helpers.h"

#include <boost/test/unit_test.hpp>

#include <csignal>
#include <fstream>

using namespace audiod;
using namespace audiod::test;
using namespace std::chrono_literals;

BOOST_AUTO_TEST_SUITE(modules)

BOOST_AUTO_TEST_CASE(broken_modules_are_refused_at_load_and_the_server_plays_on) {
    TempDir dir;
    ServerProcess server(file_sink_config(dir.file("out.wav")));
    // A stream plays throughout, on the sink that was there before.
    PlayingClient client({"--signal", "counter"});
    const auto id = wait_for_stream(30s);
    BOOST_REQUIRE(id);
    const std::vector<std::pair<std::string, std::string>> cases = {
        {"no-entry", "has no audiod_module_entry()"},
        {"no-descriptor", "returned no descriptor from audiod_module_entry()"},
        {"old-abi", "was built for module ABI " + std::to_string(AUDIOD_MODULE_ABI_VERSION - 1) +
                        "; this audiod loads ABI " + std::to_string(AUDIOD_MODULE_ABI_VERSION) +
                        " modules: rebuild it against this audiod's audiod/module.h"},
        {"new-abi", "was built for module ABI " + std::to_string(AUDIOD_MODULE_ABI_VERSION + 1) +
                        "; this audiod loads ABI " + std::to_string(AUDIOD_MODULE_ABI_VERSION) +
                        " modules"},
        {"misnamed", "names itself 'something-else'"},
        {"empty", "provides neither a sink nor a source"},
        {"sink-no-write", "has no sink 'write' function (required)"},
        {"source-no-read", "has no source 'read' function (required)"},
    };
    for (const auto& [way, message] : cases) {
        const ProgramResult r = run_tool("audioctl", {"load-sink", "broken-" + way, "x"});
        BOOST_CHECK_MESSAGE(r.status == 1, way << ": status " << r.status);
        BOOST_CHECK_MESSAGE(r.err.find("broken-" + way + ".so " + message) != std::string::npos,
                            way << ": '" << r.err << "' lacks '" << message << "'");
    }
    // Nothing was added, and the server still plays and answers.
    const ProgramResult sinks = run_tool("audioctl", {"--json", "list", "sinks"});
    BOOST_CHECK(sinks.out.find("\"name\":\"x\"") == std::string::npos);
    BOOST_REQUIRE(wait_for_more(*id, 4800));
    BOOST_CHECK_EQUAL(sink_field("out", "state"), "running");
    const ProgramResult played = client.stop_without_underruns();
    BOOST_CHECK_EQUAL(server.stop(SIGTERM), 0);
}

BOOST_AUTO_TEST_CASE(a_configured_broken_source_stops_the_start_with_a_reason) {
    TempDir dir;
    std::ofstream(dir.file("audiod.conf"))
        << "[server]\nrt-priority = 0\n[sinks.out]\ntype = \"null\"\n"
           "[sources.mic]\ntype = \"broken-source-no-read\"\n";
    // A socket of its own, not $AUDIOD_SOCKET's (see test_alsa_source.cpp).
    const ProgramResult r =
        run_tool("audiod", {"--socket", dir.file("socket"), "--config", dir.file("audiod.conf"),
                            "--state", dir.file("state")});
    BOOST_CHECK_NE(r.status, 0);
    BOOST_CHECK_MESSAGE(r.err.find("source 'mic'") != std::string::npos &&
                            r.err.find("has no source 'read' function (required)") !=
                                std::string::npos,
                        r.err);
}

BOOST_AUTO_TEST_SUITE_END()
