// audioctl against a real server: listing, JSON output, volume control,
// ending a client, and clear failures.
#include "helpers.h"

#include <boost/test/unit_test.hpp>

#include <cmath>
#include <csignal>
#include <optional>
#include <string>
#include <thread>

using namespace audiod;
using namespace audiod::test;
using namespace std::chrono_literals;

namespace {

// Valid JSON, checked by Python's parser (a test helper, not a dependency of
// audiod).
bool is_valid_json(const std::string& text) {
    TempDir dir;
    {
        std::FILE* f = std::fopen(dir.file("j").c_str(), "w");
        std::fputs(text.c_str(), f);
        std::fclose(f);
    }
    return run_program({"/usr/bin/python3", "-c", "import json,sys; json.load(open(sys.argv[1]))",
                        dir.file("j")})
               .status == 0;
}

bool has_keys(const std::string& json, std::initializer_list<const char*> keys) {
    bool all = true;
    for (const char* key : keys) {
        if (json.find(std::string("\"") + key + "\":") == std::string::npos) {
            BOOST_ERROR("missing key " << key << " in " << json);
            all = false;
        }
    }
    return all;
}

// The id of application APP's client in `audioctl --json list clients`.
std::optional<uint32_t> client_of_app(const std::string& json, const std::string& app) {
    const auto at = json.find("\"app\":\"" + app + "\"");
    const auto start = at == std::string::npos ? at : json.rfind('{', at);
    if (start == std::string::npos) {
        return std::nullopt;
    }
    const auto id = json_number(json.substr(start, at - start), "id");
    return id ? std::optional<uint32_t>(static_cast<uint32_t>(*id)) : std::nullopt;
}

} // namespace

BOOST_AUTO_TEST_SUITE(audioctl)

BOOST_AUTO_TEST_CASE(list_and_info_in_text_and_json) {
    TempDir dir;
    ServerProcess server(
        file_sink_config(dir.file("out.wav"), 128, "\n[sinks.spare]\ntype = \"null\"\n"));
    // Held open until the test has looked at it.
    PlayingClient client({"--signal", "constant", "--app", "json-app"});
    BOOST_REQUIRE(wait_for_stream(30s));

    ProgramResult r = run_tool("audioctl", {"--json", "list", "streams"});
    BOOST_REQUIRE_EQUAL(r.status, 0);
    BOOST_CHECK(r.out.front() == '[');
    BOOST_CHECK(is_valid_json(r.out));
    BOOST_CHECK(has_keys(r.out, {"id", "app", "device", "state", "volume", "muted", "xruns",
                                 "format", "rate", "channels"}));
    BOOST_CHECK(r.out.find("\"app\":\"json-app\"") != std::string::npos);
    BOOST_CHECK(r.out.find("\"device\":\"out\"") != std::string::npos);
    BOOST_CHECK(r.out.find("\"format\":\"s16le\"") != std::string::npos);

    r = run_tool("audioctl", {"list", "sinks", "--json"});
    BOOST_REQUIRE_EQUAL(r.status, 0);
    BOOST_CHECK(r.out.front() == '[');
    BOOST_CHECK(is_valid_json(r.out));
    BOOST_CHECK(has_keys(
        r.out, {"name", "type", "rate", "channels", "quantum", "volume", "muted", "default"}));
    BOOST_CHECK(r.out.find("\"name\":\"spare\"") != std::string::npos);
    BOOST_CHECK(r.out.find("\"quantum\":128") != std::string::npos);

    r = run_tool("audioctl", {"--json", "list"});
    BOOST_REQUIRE_EQUAL(r.status, 0);
    BOOST_CHECK(r.out.front() == '[');
    BOOST_CHECK(is_valid_json(r.out));
    BOOST_CHECK(r.out.find("\"kind\":\"sink\"") != std::string::npos);
    BOOST_CHECK(r.out.find("\"kind\":\"stream\"") != std::string::npos);

    r = run_tool("audioctl", {"list"});
    BOOST_REQUIRE_EQUAL(r.status, 0);
    BOOST_CHECK(r.out.find("json-app") != std::string::npos);
    BOOST_CHECK(r.out.find("out *") != std::string::npos);

    r = run_tool("audioctl", {"info"});
    BOOST_REQUIRE_EQUAL(r.status, 0);
    BOOST_CHECK(r.out.find("quantum:      128 frames") != std::string::npos);
    BOOST_CHECK(r.out.find("scheduling:") != std::string::npos);
    BOOST_CHECK(r.out.find("spare (null") != std::string::npos);
    r = run_tool("audioctl", {"--json", "info"});
    BOOST_CHECK(is_valid_json(r.out));
    BOOST_CHECK(has_keys(r.out, {"version", "rate", "quantum", "sinks", "scheduling"}));
    BOOST_CHECK_EQUAL(client.stop().status, 0);
}

BOOST_AUTO_TEST_CASE(set_volume_ramps_to_exact_levels) {
    TempDir dir;
    const std::string wav = dir.file("out.wav");
    ServerProcess server(file_sink_config(wav));
    // Up to a minute of sound, ended once each level has played 0.2 s.
    PlayingClient client({"--signal", "constant", "--value", "10000"});
    const auto id = wait_for_stream(30s);
    BOOST_REQUIRE(id);
    BOOST_REQUIRE(wait_for_position(*id, 9600));
    ProgramResult r = run_tool("audioctl", {"set-volume", std::to_string(*id), "50%"});
    BOOST_REQUIRE_MESSAGE(r.status == 0, r.err);
    BOOST_REQUIRE(wait_for_more(*id, 9600));
    r = run_tool("audioctl", {"set-volume", std::to_string(*id), "-6dB"});
    BOOST_REQUIRE_MESSAGE(r.status == 0, r.err);
    r = run_tool("audioctl", {"--json", "list", "streams"});
    BOOST_CHECK(r.out.find("\"volume\":0.501") != std::string::npos);
    BOOST_REQUIRE(wait_for_more(*id, 9600));
    BOOST_CHECK_EQUAL(client.stop().status, 0);
    BOOST_REQUIRE_EQUAL(server.stop(SIGTERM), 0);

    const auto out = read_wav_s16(wav);
    // Longest run of each exact level, and the largest step between frames.
    const int16_t minus6db = static_cast<int16_t>(std::lrint(10000 * std::pow(10.0, -6.0 / 20)));
    size_t run_full = 0, run_half = 0, run_6db = 0, run = 0;
    int16_t previous = 0;
    double worst_step = 0;
    bool started = false;
    for (size_t f = 0; f < out.size() / 2; ++f) {
        const int16_t s = out[f * 2];
        if (s == 0) {
            continue;
        }
        run = started && s == previous ? run + 1 : 1;
        if (started) {
            worst_step = std::max(worst_step, std::abs(double(s) - previous));
        }
        started = true;
        previous = s;
        if (s == 10000) {
            run_full = std::max(run_full, run);
        } else if (s == 5000) {
            run_half = std::max(run_half, run);
        } else if (std::abs(s - minus6db) <= 1) {
            run_6db = std::max(run_6db, run);
        }
    }
    BOOST_CHECK_GT(run_full, 4800u);
    BOOST_CHECK_GT(run_half, 4800u); // settled exactly at 50 %
    BOOST_CHECK_GT(run_6db, 4800u);
    // 5 ms ramp at 48 kHz = 240 frames for a 5000 step: about 21 per frame.
    BOOST_CHECK_LE(worst_step, 5000.0 / 240 + 2);
}

BOOST_AUTO_TEST_CASE(bad_targets_and_levels_fail_clearly) {
    TempDir dir;
    ServerProcess server(file_sink_config(dir.file("out.wav")));
    ProgramResult r = run_tool("audioctl", {"set-volume", "999", "50%"});
    BOOST_CHECK_EQUAL(r.status, 1);
    BOOST_CHECK_MESSAGE(r.err.find("no stream with id 999") != std::string::npos, r.err);
    r = run_tool("audioctl", {"set-volume", "sink:ghost", "50%"});
    BOOST_CHECK_EQUAL(r.status, 1);
    BOOST_CHECK_MESSAGE(r.err.find("no sink named 'ghost'") != std::string::npos, r.err);
    r = run_tool("audioctl", {"set-volume", "3", "loud"});
    BOOST_CHECK_EQUAL(r.status, 2);
    BOOST_CHECK(r.err.find("invalid volume") != std::string::npos);
    r = run_tool("audioctl", {"set-volume", "abc", "50%"});
    BOOST_CHECK_EQUAL(r.status, 2);
    r = run_tool("audioctl", {"list", "planets"});
    BOOST_CHECK_EQUAL(r.status, 2);
    r = run_tool("audioctl", {"frobnicate"});
    BOOST_CHECK_EQUAL(r.status, 2);
    r = run_tool("audioctl", {"set-volume", "sink:out", "25%"});
    BOOST_CHECK_EQUAL(r.status, 0);
    r = run_tool("audioctl", {"--json", "list", "sinks"});
    BOOST_CHECK(r.out.find("\"volume\":0.25") != std::string::npos);
}

// kill-client ends a player for good: it is told why and fails with that
// error instead of reconnecting (as it would after a server restart), its
// stream goes, and the other player's samples come out exact throughout.
BOOST_AUTO_TEST_CASE(kill_client_ends_a_player_for_good_and_no_one_else) {
    TempDir dir;
    ServerProcess server(file_sink_config(dir.file("out.wav")));
    // Silent, paced and keeping its clock, as a media player plays.
    BackgroundProgram victim({bin("audiod-test-client"), "--signal", "constant", "--value", "0",
                              "--frames", "2880000", "--paced", "--app", "victim"});
    PlayingClient survivor({"--signal", "counter", "--app", "survivor"});
    BOOST_REQUIRE_MESSAGE(wait_for_app_stream("victim"),
                          "the victim's stream never appeared; " << why_no_stream(victim, server));
    const auto id = wait_for_app_stream("survivor");
    BOOST_REQUIRE_MESSAGE(id, "the survivor's stream never appeared; "
                                  << why_no_stream(survivor.program(), server));
    BOOST_REQUIRE(wait_for_position(*id, 4800));

    const auto victim_client =
        client_of_app(run_tool("audioctl", {"--json", "list", "clients"}).out, "victim");
    BOOST_REQUIRE(victim_client);
    const ProgramResult killed =
        run_tool("audioctl", {"kill-client", std::to_string(*victim_client)});
    BOOST_CHECK_MESSAGE(killed.status == 0, killed.err);
    const ProgramResult ended = victim.finish(20s);
    BOOST_CHECK_EQUAL(ended.status, 3); // its write failed
    BOOST_CHECK_MESSAGE(ended.err.find("this client was ended on the server") != std::string::npos,
                        ended.err);
    BOOST_CHECK(eventually(
        [] {
            return run_tool("audioctl", {"list", "streams"}).out.find("victim") ==
                   std::string::npos;
        },
        10s));

    ProgramResult r = run_tool("audioctl", {"kill-client", "999"});
    BOOST_CHECK_EQUAL(r.status, 1);
    BOOST_CHECK_MESSAGE(r.err.find("no client 999") != std::string::npos, r.err);
    BOOST_CHECK_EQUAL(run_tool("audioctl", {"kill-client", "first"}).status, 2);

    BOOST_REQUIRE(wait_for_more(*id, 4800));
    const ProgramResult played = survivor.stop_without_underruns();
    BOOST_REQUIRE_EQUAL(server.stop(SIGTERM), 0);
    BOOST_CHECK_EQUAL(counter_frames_heard(dir.file("out.wav")),
                      json_number(played.out, "written").value_or(0));
}

BOOST_AUTO_TEST_SUITE_END()
