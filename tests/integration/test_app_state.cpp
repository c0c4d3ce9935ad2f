// Per-application memory across server restarts, with the real audiod.
#include "helpers.h"

#include <boost/test/unit_test.hpp>

#include <algorithm>
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

BOOST_AUTO_TEST_CASE(list_apps_shows_playing_remembered_and_ruled_applications) {
    TempDir dir;
    std::ofstream(dir.file("state")) << "version = 1\napps-count = 1\n\n[apps.\"sleeper\"]\n"
                                        "volume = 0.25\nmuted = true\nsink = \"b\"\n";
    ServerProcess server(config(dir, "b.wav") + "\n[apps.ruled]\nvolume = \"50%\"\n", dir.path());
    PlayingClient client({"--app", "player"});
    BOOST_REQUIRE(wait_for_stream(30s));
    const ProgramResult r = run_tool("audioctl", {"--json", "list", "apps"});
    BOOST_REQUIRE_MESSAGE(r.status == 0, r.err);
    // In name order: player, ruled, sleeper.
    const auto player = r.out.find("\"name\":\"player\"");
    const auto ruled = r.out.find("\"name\":\"ruled\"");
    const auto sleeper = r.out.find("\"name\":\"sleeper\"");
    BOOST_REQUIRE_MESSAGE(player < ruled && ruled < sleeper && sleeper != std::string::npos, r.out);
    const std::string p = r.out.substr(player, ruled - player);
    const std::string q = r.out.substr(ruled, sleeper - ruled);
    const std::string z = r.out.substr(sleeper);
    BOOST_CHECK_MESSAGE(p.find("\"volume\":1,\"muted\":false,\"sink\":\"\",\"streams\":1,") !=
                                std::string::npos &&
                            json_number(p, "last_seen").value_or(0) > 1700000000 &&
                            p.find("\"rule\":false,\"remembered\":false") != std::string::npos,
                        p);
    BOOST_CHECK_MESSAGE(q.find("\"volume\":0.5,\"muted\":false,\"sink\":\"\",\"streams\":0,"
                               "\"last_seen\":0,\"rule\":true,\"remembered\":false") !=
                            std::string::npos,
                        q);
    BOOST_CHECK_MESSAGE(z.find("\"volume\":0.25,\"muted\":true,\"sink\":\"b\",\"streams\":0,"
                               "\"last_seen\":0,\"rule\":false,\"remembered\":true") !=
                            std::string::npos,
                        z);
    const ProgramResult text = run_tool("audioctl", {"list", "apps"});
    BOOST_CHECK_MESSAGE(text.out.find("SETTINGS") != std::string::npos &&
                            text.out.find("LAST PLAYED") != std::string::npos,
                        text.out);
    const auto line = [&](const std::string& app) {
        const auto at = text.out.find("\n" + app + " ");
        return at == std::string::npos
                   ? std::string()
                   : text.out.substr(at + 1, text.out.find('\n', at + 1) - at - 1);
    };
    BOOST_CHECK_MESSAGE(line("player").find("default") != std::string::npos &&
                            line("player").ends_with("now"),
                        text.out);
    BOOST_CHECK_MESSAGE(line("ruled").find("50%") != std::string::npos &&
                            line("ruled").find("rule") != std::string::npos &&
                            line("ruled").ends_with("never"),
                        text.out);
    BOOST_CHECK_MESSAGE(line("sleeper").find("25%") != std::string::npos &&
                            line("sleeper").find("set") != std::string::npos,
                        text.out);
    BOOST_CHECK_EQUAL(client.stop().status, 0);
}

BOOST_AUTO_TEST_CASE(settings_for_an_application_that_never_played_apply_from_its_first_frame) {
    TempDir dir;
    const std::string conf = config(dir, "b.wav") + "\n[apps.ruled]\nvolume = \"50%\"\n";
    const auto count = [](const std::vector<int16_t>& samples, int16_t level) {
        return std::count(samples.begin(), samples.end(), level);
    };
    {
        ServerProcess server(conf, dir.path());
        // Set up before anything plays, as a start-up script would.
        const ProgramResult set = run_tool("audioctl", {"set-volume", "app:newbie", "30%"});
        BOOST_CHECK_EQUAL(set.status, 0);
        BOOST_CHECK_EQUAL(set.out, "newbie has not played yet; remembered\n");
        const ProgramResult moved = run_tool("audioctl", {"move-stream", "app:later", "b"});
        BOOST_CHECK_EQUAL(moved.status, 0);
        BOOST_CHECK_EQUAL(moved.out, "later has not played yet; remembered\n");
        BOOST_REQUIRE_EQUAL(play_constant("newbie").status, 0);
        BOOST_REQUIRE_EQUAL(play_constant("later").status, 0);
        // Once it has played, a change is just a change.
        const ProgramResult again = run_tool("audioctl", {"set-volume", "app:newbie", "30%"});
        BOOST_CHECK_EQUAL(again.status, 0);
        BOOST_CHECK_EQUAL(again.out, "");
        // A rule from the configuration applies from the first frame; a
        // change at run time wins over it.
        BOOST_REQUIRE_EQUAL(play_constant("ruled").status, 0);
        ctl_ok({"set-volume", "app:ruled", "20%"});
        BOOST_REQUIRE_EQUAL(play_constant("plain").status, 0);
        BOOST_REQUIRE_EQUAL(server.stop(SIGTERM), 0);
    }
    auto a = read_wav_s16(dir.file("a.wav"));
    BOOST_CHECK_EQUAL(count(a, 3000), 2 * 24000);  // newbie at 30 %
    BOOST_CHECK_EQUAL(count(a, 5000), 2 * 24000);  // ruled at 50 %
    BOOST_CHECK_EQUAL(count(a, 10000), 2 * 24000); // plain, untouched
    const auto b = read_wav_s16(dir.file("b.wav"));
    BOOST_CHECK_EQUAL(count(b, 10000), 2 * 24000); // later, moved before it played

    {
        // After a restart: the run-time change still wins over the rule,
        // and every application that played is listed, with when.
        ServerProcess server(conf, dir.path());
        const ProgramResult apps = run_tool("audioctl", {"--json", "list", "apps"});
        for (const std::string app : {"newbie", "later", "ruled", "plain"}) {
            const auto at = apps.out.find("\"name\":\"" + app + "\"");
            BOOST_REQUIRE_MESSAGE(at != std::string::npos, app << " missing: " << apps.out);
            BOOST_CHECK_MESSAGE(json_number(apps.out.substr(at), "last_seen").value_or(0) >
                                    1700000000,
                                app << ": " << apps.out);
        }
        BOOST_REQUIRE_EQUAL(play_constant("ruled").status, 0);
        // Forgetting it brings the rule back.
        const ProgramResult forgot = run_tool("audioctl", {"forget", "app:ruled"});
        BOOST_CHECK_MESSAGE(forgot.status == 0, forgot.err);
        const ProgramResult twice = run_tool("audioctl", {"forget", "app:ruled"});
        BOOST_CHECK_EQUAL(twice.status, 1);
        BOOST_CHECK_MESSAGE(twice.err.find("nothing is remembered") != std::string::npos,
                            twice.err);
        BOOST_REQUIRE_EQUAL(play_constant("ruled").status, 0);
        BOOST_REQUIRE_EQUAL(server.stop(SIGTERM), 0);
    }
    a = read_wav_s16(dir.file("a.wav"));
    BOOST_CHECK_EQUAL(count(a, 2000), 2 * 24000); // the run-time 20 %, after the restart
    BOOST_CHECK_EQUAL(count(a, 5000), 2 * 24000); // the rule again, once forgotten
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
