// Per-application memory across server restarts, with the real audiod.
#include "helpers.h"

#include <boost/test/unit_test.hpp>

#include <csignal>
#include <fstream>
#include <sstream>
#include <sys/stat.h>
#include <thread>
#include <unistd.h>

using namespace audiod;
using namespace audiod::test;
using namespace std::chrono_literals;

namespace {

std::string config(const TempDir& dir, const std::string& b_file) {
    return "[server]\nrt-priority = 0\ndefault-sink = \"a\"\n\n"
           "[sinks.a]\ntype = \"file\"\npath = \"" +
           dir.file("a.wav") + "\"\n\n[sinks.b]\ntype = \"file\"\npath = \"" + dir.file(b_file) +
           "\"\n";
}

void ctl_ok(const std::vector<std::string>& args) {
    const ProgramResult r = run_tool("audioctl", args);
    BOOST_REQUIRE_MESSAGE(r.status == 0, "audioctl " << args[0] << ": " << r.err);
}

// Plays `frames` of a constant 10000 as application `app`.
ProgramResult play_constant(const std::string& app, const std::string& frames = "24000") {
    return run_tool("audiod-test-client",
                    {"--signal", "constant", "--value", "10000", "--frames", frames, "--app", app},
                    std::chrono::seconds(60));
}

} // namespace

BOOST_AUTO_TEST_SUITE(app_state)

BOOST_AUTO_TEST_CASE(volume_mute_and_sink_survive_restarts_and_apply_from_the_first_frame) {
    TempDir dir;
    {
        ServerProcess server(config(dir, "b1.wav"), dir.path());
        PlayingClient client({"--app", "keeper"});
        BOOST_REQUIRE(wait_for_stream(30s));
        ctl_ok({"set-volume", "app:keeper", "30%"});
        ctl_ok({"move-stream", "app:keeper", "b"});
        BOOST_CHECK_EQUAL(client.stop().status, 0);
        BOOST_REQUIRE_EQUAL(server.stop(SIGTERM), 0);
    }
    const std::string state = file_contents(dir.file("state"));
    BOOST_CHECK_MESSAGE(state.find("[apps.\"keeper\"]") != std::string::npos, state);
    BOOST_CHECK(state.find("volume = 0.300000012") != std::string::npos ||
                state.find("volume = 0.3") != std::string::npos);
    BOOST_CHECK(state.find("sink = \"b\"") != std::string::npos);
    BOOST_CHECK(::access(dir.file("state.tmp").c_str(), F_OK) != 0); // renamed into place

    {
        // The next stream of "keeper" goes to b at 30% from its first frame.
        ServerProcess server(config(dir, "b2.wav"), dir.path());
        BOOST_REQUIRE_EQUAL(play_constant("keeper").status, 0);
        // Muting is remembered too, and does not store a volume of 0.
        ctl_ok({"mute", "app:keeper", "on"});
        BOOST_REQUIRE_EQUAL(server.stop(SIGTERM), 0);
    }
    const auto b2 = read_wav_s16(dir.file("b2.wav"));
    const auto start = first_sound(b2, 2);
    BOOST_REQUIRE(start);
    BOOST_CHECK_EQUAL(b2[*start * 2], 3000); // no ramp up from 100 %
    BOOST_CHECK_EQUAL(std::count(b2.begin(), b2.end(), int16_t{3000}), 2 * 24000);
    const auto a = read_wav_s16(dir.file("a.wav")); // nothing went to the default sink
    BOOST_CHECK(std::all_of(a.begin(), a.end(), [](int16_t s) { return s == 0; }));
    const std::string muted_state = file_contents(dir.file("state"));
    BOOST_CHECK(muted_state.find("muted = true") != std::string::npos);
    BOOST_CHECK(muted_state.find("volume = 0.3") != std::string::npos);

    {
        // Muted from the first frame; unmuting restores 30%.
        ServerProcess server(config(dir, "b3.wav"), dir.path());
        BOOST_REQUIRE_EQUAL(play_constant("keeper").status, 0);
        ctl_ok({"mute", "app:keeper", "off"});
        BOOST_REQUIRE_EQUAL(play_constant("keeper").status, 0);
        BOOST_REQUIRE_EQUAL(server.stop(SIGTERM), 0);
    }
    const auto b3 = read_wav_s16(dir.file("b3.wav"));
    BOOST_CHECK_EQUAL(std::count(b3.begin(), b3.end(), int16_t{3000}), 2 * 24000);
    BOOST_CHECK_EQUAL(
        std::count_if(b3.begin(), b3.end(), [](int16_t s) { return s != 0 && s != 3000; }), 0);
}

BOOST_AUTO_TEST_CASE(list_apps_shows_playing_and_remembered_applications) {
    TempDir dir;
    std::ofstream(dir.file("state")) << "version = 1\napps-count = 1\n\n[apps.\"sleeper\"]\n"
                                        "volume = 0.25\nmuted = true\nsink = \"b\"\n";
    ServerProcess server(config(dir, "b.wav"), dir.path());
    PlayingClient client({"--app", "player"});
    BOOST_REQUIRE(wait_for_stream(30s));
    const ProgramResult r = run_tool("audioctl", {"--json", "list", "apps"});
    BOOST_REQUIRE_MESSAGE(r.status == 0, r.err);
    BOOST_CHECK_EQUAL(r.out, "[{\"kind\":\"app\",\"name\":\"player\",\"volume\":1,\"muted\":false,"
                             "\"sink\":\"\",\"streams\":1},{\"kind\":\"app\",\"name\":"
                             "\"sleeper\",\"volume\":0.25,\"muted\":true,\"sink\":\"b\","
                             "\"streams\":0}]\n");
    const ProgramResult text = run_tool("audioctl", {"list", "apps"});
    BOOST_CHECK_MESSAGE(text.out.find("sleeper") != std::string::npos &&
                            text.out.find("25%") != std::string::npos,
                        text.out);
    BOOST_CHECK_EQUAL(client.stop().status, 0);
}

BOOST_AUTO_TEST_CASE(executable_name_is_the_key_when_no_name_is_declared) {
    TempDir dir;
    ServerProcess server(config(dir, "b.wav"), dir.path());
    // audioplay declares "audioplay" unless told otherwise; an empty name
    // falls back to the executable name from the peer's credentials.
    PlayingClient client({"--app", ""});
    BOOST_REQUIRE(wait_for_stream(30s));
    const ProgramResult r = run_tool("audioctl", {"--json", "list", "streams"});
    BOOST_CHECK_MESSAGE(r.out.find("\"app\":\"audiod-test-cli\"") != std::string::npos, r.out);
    BOOST_CHECK_EQUAL(client.stop().status, 0);
}

BOOST_AUTO_TEST_CASE(corrupt_or_truncated_state_is_set_aside) {
    const std::vector<std::string> bad_files = {
        "\x01\x02garbage [[[",
        "version = 1\napps-count = 2\n\n[apps.\"one\"]\nvolume = 0.5\nmuted = false\n",
        "version = 1\napps-count = 1\n\n[apps.\"one\"]\nvolume = 0.5\nmuted = fal",
        "version = 99\napps-count = 0\n",
    };
    for (const std::string& text : bad_files) {
        TempDir dir;
        std::ofstream(dir.file("state")) << text;
        ServerProcess server(config(dir, "b.wav"), dir.path());
        BOOST_CHECK_EQUAL(run_tool("audioctl", {"info"}).status, 0);
        BOOST_REQUIRE_EQUAL(server.stop(SIGTERM), 0);
        BOOST_CHECK_MESSAGE(server.log().find("is unreadable") != std::string::npos, server.log());
        BOOST_CHECK_EQUAL(file_contents(dir.file("state.corrupt")), text);
    }
}

BOOST_AUTO_TEST_SUITE_END()
