// Routing with the real audiod and audioctl: moving streams while they play,
// sinks loaded and unloaded at run time, the default sink, rescue, and
// volumes that multiply.
#include "fixtures/fixture_signals.h"
#include "helpers.h"

#include <boost/test/unit_test.hpp>

#include <cmath>
#include <csignal>
#include <set>
#include <thread>

using namespace audiod;
using namespace audiod::test;
using namespace std::chrono_literals;

namespace {

std::string two_file_sinks(const TempDir& dir, const std::string& extra = "") {
    return "[server]\nrt-priority = 0\ndefault-sink = \"a\"\n\n"
           "[sinks.a]\ntype = \"file\"\npath = \"" +
           dir.file("a.wav") +
           "\"\n\n"
           "[sinks.b]\ntype = \"file\"\nquantum = 64\npath = \"" +
           dir.file("b.wav") + "\"\n" + extra;
}

constexpr uint64_t kQuarterSecond = 12000;
constexpr uint64_t kTenth = 4800;

ProgramResult ctl(const std::vector<std::string>& args) {
    return run_tool("audioctl", args);
}

} // namespace

BOOST_AUTO_TEST_SUITE(routing)

BOOST_AUTO_TEST_CASE(moves_between_clocks_and_quanta_lose_and_repeat_nothing) {
    TempDir dir;
    ServerProcess server(two_file_sinks(dir));
    PlayingClient client({"--signal", "sequence", "--app", "mover"});
    const auto id = wait_for_stream(30s);
    BOOST_REQUIRE(id);
    // Each stay plays at least a quarter of a second, however loaded the machine.
    BOOST_REQUIRE(wait_for_position(*id, kQuarterSecond));
    ctl_ok({"move-stream", std::to_string(*id), "b"});
    BOOST_CHECK_EQUAL(stream_field(*id, "device"), "b");
    BOOST_REQUIRE(wait_for_more(*id, kQuarterSecond));
    ctl_ok({"move-stream", "app:mover", "a"});
    BOOST_REQUIRE(wait_for_more(*id, kQuarterSecond));
    ctl_ok({"move-stream", std::to_string(*id), "b"});
    BOOST_REQUIRE(wait_for_more(*id, kQuarterSecond));
    const ProgramResult r = client.stop_without_underruns();
    BOOST_REQUIRE_EQUAL(server.stop(SIGTERM), 0);

    const auto a = sequence_in(dir.file("a.wav"));
    const auto b = sequence_in(dir.file("b.wav"));
    BOOST_CHECK_GT(a.size(), 0u);
    BOOST_CHECK_GT(b.size(), 0u);
    // A, B, A, B: four stays, split over the two files.
    BOOST_CHECK_EQUAL(check_split_sequence({a, b}, written_by(r)), 4u);
}

BOOST_AUTO_TEST_CASE(sinks_load_unload_default_and_rescue) {
    TempDir dir;
    ServerProcess server(two_file_sinks(dir));
    // Loading at run time, with the engine's own quantum option.
    ctl_ok({"load-sink", "file", "c", "path=" + dir.file("c1.wav"), "quantum=128"});
    ProgramResult r = ctl({"--json", "list", "sinks"});
    BOOST_CHECK(r.out.find("\"name\":\"c\"") != std::string::npos);
    BOOST_CHECK(r.out.find("\"quantum\":128") != std::string::npos);
    // New streams without a preference go to the default.
    ctl_ok({"set-default-sink", "c"});
    r = ctl({"--json", "list", "sinks"});
    const auto c_at = r.out.find("\"name\":\"c\"");
    BOOST_CHECK(r.out.find("\"default\":true", c_at) < r.out.find('}', c_at));

    PlayingClient client({"--signal", "sequence", "--app", "rescued"});
    const auto id = wait_for_stream(30s);
    BOOST_REQUIRE(id);
    BOOST_CHECK_EQUAL(stream_field(*id, "device"), "c");
    // The application now prefers c.
    ctl_ok({"move-stream", "app:rescued", "c"});
    BOOST_REQUIRE(wait_for_position(*id, kQuarterSecond));
    // c goes away: the stream moves to the new default instead of dying.
    ctl_ok({"unload-sink", "c"});
    BOOST_CHECK_EQUAL(stream_field(*id, "device"), "a");
    r = ctl({"info"});
    BOOST_CHECK(r.out.find("default sink: a") != std::string::npos);
    BOOST_REQUIRE(wait_for_more(*id, kQuarterSecond));
    // c comes back (writing another file): the stream returns to it.
    ctl_ok({"load-sink", "file", "c", "path=" + dir.file("c2.wav")});
    BOOST_CHECK(eventually([&] { return stream_field(*id, "device") == "c"; }, 30s));
    BOOST_REQUIRE(wait_for_more(*id, kQuarterSecond));
    r = client.stop();
    BOOST_REQUIRE_MESSAGE(r.status == 0, r.err);
    BOOST_REQUIRE_EQUAL(server.stop(SIGTERM), 0);
    BOOST_CHECK_EQUAL(
        check_split_sequence({sequence_in(dir.file("c1.wav")), sequence_in(dir.file("a.wav")),
                              sequence_in(dir.file("c2.wav"))},
                             written_by(r)),
        3u);
}

BOOST_AUTO_TEST_CASE(a_server_of_many_sinks_loads_back_one_it_unloaded) {
    // 40 sinks, as a large setup (or the soak's 37) has: unloading one
    // and loading it again is no "too many" (the bound was once 32, and
    // counted against loads only).
    TempDir dir;
    std::string config;
    for (int i = 0; i < 40; ++i) {
        config += "[sinks.n" + std::to_string(i) + "]\ntype = \"null\"\nquantum = 1024\n";
    }
    ServerProcess server(config);
    ctl_ok({"unload-sink", "n7"});
    ctl_ok({"load-sink", "null", "n7", "quantum=1024"});
    BOOST_CHECK(ctl({"list", "sinks"}).out.find("n7 ") != std::string::npos);
    BOOST_REQUIRE_EQUAL(server.stop(SIGTERM), 0);
}

BOOST_AUTO_TEST_CASE(bad_targets_fail_clearly) {
    TempDir dir;
    ServerProcess server(two_file_sinks(dir));
    const std::vector<std::pair<std::vector<std::string>, std::string>> cases = {
        {{"load-sink", "warp", "w"}, "unknown sink type 'warp'"},
        {{"load-sink", "file", "a", "path=/tmp/x.wav"}, "a sink named 'a' already exists"},
        {{"load-sink", "file", "bad name"}, "invalid sink name"},
        {{"load-sink", "file", "d"}, "the file sink needs path"},
        {{"load-sink", "null", "q", "quantum=3"}, "quantum = 3 is out of range"},
        {{"unload-sink", "ghost"}, "no sink named 'ghost'"},
        {{"set-default-sink", "ghost"}, "no sink named 'ghost'"},
        {{"move-stream", "999", "a"}, "no stream with id 999"},
        {{"move-stream", "app:nobody", "ghost"}, "no sink or source named 'ghost'"},
        {{"mute", "999"}, "no stream with id 999"},
        {{"mute", "sink:ghost", "on"}, "no sink named 'ghost'"},
        {{"set-volume", "app:" + std::string(65, 'n'), "50%"}, "invalid application name"},
        {{"forget", "app:nobody"}, "nothing is remembered about application 'nobody'"},
    };
    for (const auto& [args, message] : cases) {
        const ProgramResult r = ctl(args);
        BOOST_CHECK_MESSAGE(r.status == 1, args[0] << " " << args[1] << ": status " << r.status);
        BOOST_CHECK_MESSAGE(r.err.find(message) != std::string::npos,
                            args[0] << ": '" << r.err << "' lacks '" << message << "'");
    }
    // Usage errors are status 2.
    for (const std::vector<std::string>& args :
         std::vector<std::vector<std::string>>{{"mute", "7", "sideways"},
                                               {"move-stream", "sink:a", "b"},
                                               {"move-stream", "7"},
                                               {"load-sink", "file", "x", "novalue"},
                                               {"list", "planets"}}) {
        BOOST_CHECK_EQUAL(ctl(args).status, 2);
    }
    // The only sink with streams cannot go away.
    ctl_ok({"unload-sink", "b"});
    PlayingClient client({});
    BOOST_REQUIRE(wait_for_stream(30s));
    const ProgramResult last = ctl({"unload-sink", "a"});
    BOOST_CHECK_EQUAL(last.status, 1);
    BOOST_CHECK(last.err.find("no other sink") != std::string::npos);
    BOOST_CHECK_EQUAL(client.stop().status, 0);
}

BOOST_AUTO_TEST_CASE(stream_app_and_sink_volumes_multiply_and_mute_keeps_levels) {
    TempDir dir;
    const std::string wav = dir.file("out.wav");
    ServerProcess server(file_sink_config(wav));
    PlayingClient client({"--signal", "constant", "--value", "16000", "--app", "vol"});
    const auto id = wait_for_stream(30s);
    BOOST_REQUIRE(id);
    const std::string stream = std::to_string(*id);
    const std::vector<std::vector<std::string>> steps = {
        {"set-volume", stream, "50%"},       // 8000
        {"set-volume", "app:vol", "0.5"},    // 4000
        {"set-volume", "sink:out", "-=50%"}, // 2000: a relative step
        {"mute", "app:vol", "on"},           // 0
        {"mute", "app:vol", "off"},          // 2000 again: mute kept the volume
        {"mute", stream, "toggle"},          // 0
        {"mute", stream, "toggle"},          // 2000
        {"set-volume", "sink:out", "+50%"},  // 4000
    };
    // Each level plays for a tenth of a second (frames the sink took from
    // the stream) before the next step.
    BOOST_REQUIRE(wait_for_position(*id, kTenth));
    for (const auto& step : steps) {
        ctl_ok(step);
        BOOST_REQUIRE(wait_for_more(*id, kTenth));
    }
    BOOST_CHECK_EQUAL(client.stop().status, 0);
    BOOST_REQUIRE_EQUAL(server.stop(SIGTERM), 0);

    // The levels the output settles on, in order (runs of >= 2400 frames).
    const auto out = read_wav_s16(wav);
    const auto start = first_sound(out, 2);
    BOOST_REQUIRE(start);
    std::vector<int> levels;
    size_t run = 0;
    for (size_t f = *start; f < out.size() / 2; ++f) {
        run = f > *start && out[2 * f] == out[2 * f - 2] ? run + 1 : 1;
        if (run == 2400 && (levels.empty() || levels.back() != out[2 * f])) {
            levels.push_back(out[2 * f]);
        }
    }
    // The stream's tail after draining is silence too: drop a trailing 0.
    if (!levels.empty() && levels.back() == 0) {
        levels.pop_back();
    }
    const std::vector<int> expected{16000, 8000, 4000, 2000, 0, 2000, 0, 2000, 4000};
    BOOST_CHECK_EQUAL_COLLECTIONS(levels.begin(), levels.end(), expected.begin(), expected.end());
}

BOOST_AUTO_TEST_CASE(a_step_to_ten_percent_ramps_and_settles_exactly) {
    TempDir dir;
    const std::string wav = dir.file("out.wav");
    ServerProcess server(file_sink_config(wav));
    PlayingClient client({"--signal", "constant", "--value", "20000"});
    const auto id = wait_for_stream(30s);
    BOOST_REQUIRE(id);
    BOOST_REQUIRE(wait_for_position(*id, kTenth));
    ctl_ok({"set-volume", std::to_string(*id), "10%"});
    BOOST_REQUIRE(wait_for_more(*id, 2 * kTenth));
    BOOST_CHECK_EQUAL(client.stop().status, 0);
    BOOST_REQUIRE_EQUAL(server.stop(SIGTERM), 0);
    const auto out = read_wav_s16(wav);
    const auto start = first_sound(out, 2);
    BOOST_REQUIRE(start);
    double worst = 0;
    size_t settled = 0;
    for (size_t f = *start + 1; f < out.size() / 2 && out[2 * f] != 0; ++f) {
        worst = std::max(worst, std::abs(double(out[2 * f]) - out[2 * f - 2]));
        settled = out[2 * f] == 2000 ? settled + 1 : 0;
    }
    // A 5 ms linear ramp at 48 kHz: 240 steps of 75 for 20000 -> 2000.
    BOOST_CHECK_LE(worst, (20000.0 - 2000.0) / 240.0 + 1.0);
    BOOST_CHECK_GT(settled, 4800u);
}

BOOST_AUTO_TEST_SUITE_END()
