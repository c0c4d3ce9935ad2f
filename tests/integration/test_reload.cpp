// Reloading the configuration while streams play: SIGHUP and `audioctl
// reload` open new sinks, close removed ones (rescuing their streams),
// reopen changed ones without losing a frame, replace the [apps] rules, and
// refuse a configuration with an error as a whole.
#include "helpers.h"

#include <boost/test/unit_test.hpp>

#include <algorithm>
#include <csignal>
#include <fstream>

using namespace audiod;
using namespace audiod::test;
using namespace std::chrono_literals;

namespace {

constexpr uint64_t kQuarterSecond = 12000;

std::string file_sink(const std::string& name, const std::string& path,
                      const std::string& extra = "") {
    return "[sinks." + name + "]\ntype = \"file\"\npath = \"" + path + "\"\n" + extra + "\n";
}

const std::string kServer = "[server]\nrt-priority = 0\ndefault-sink = \"a\"\n\n";

ProgramResult audioctl_reload() {
    return run_tool("audioctl", {"reload"});
}

// Rewrites the server's configuration file.
void configure(const ServerProcess& server, const std::string& text) {
    std::ofstream(server.dir() + "/audiod.conf") << text;
}

} // namespace

BOOST_AUTO_TEST_SUITE(reload)

BOOST_AUTO_TEST_CASE(sinks_are_opened_closed_and_reopened_while_streams_play_losing_nothing) {
    TempDir dir;
    ServerProcess server(kServer + file_sink("a", dir.file("a1.wav")) +
                         file_sink("b", dir.file("b.wav"), "quantum = 64"));
    PlayingClient stayer({"--signal", "sequence", "--app", "stayer"});
    const auto stayer_id = wait_for_app_stream("stayer");
    BOOST_REQUIRE(stayer_id);
    PlayingClient evicted({"--signal", "sequence", "--app", "evicted", "--sink", "b"});
    const auto evicted_id = wait_for_app_stream("evicted");
    BOOST_REQUIRE(evicted_id);
    BOOST_REQUIRE(wait_for_position(*stayer_id, kQuarterSecond));
    BOOST_REQUIRE(wait_for_position(*evicted_id, kQuarterSecond));

    // a changes (another file, another quantum), b goes, c comes and is the
    // new default.
    configure(server, "[server]\nrt-priority = 0\ndefault-sink = \"c\"\n\n" +
                          file_sink("a", dir.file("a2.wav"), "quantum = 128") +
                          file_sink("c", dir.file("c.wav")));
    const ProgramResult r = audioctl_reload();
    BOOST_CHECK_MESSAGE(r.status == 0, r.out << r.err);
    BOOST_CHECK_MESSAGE(r.out.find("opened sink c") != std::string::npos &&
                            r.out.find("reopened sink a") != std::string::npos &&
                            r.out.find("closed sink b") != std::string::npos &&
                            r.out.find("default sink c") != std::string::npos,
                        r.out);
    const ProgramResult sinks = run_tool("audioctl", {"--json", "list", "sinks"});
    BOOST_CHECK(sinks.out.find("\"name\":\"c\"") != std::string::npos);
    BOOST_CHECK(sinks.out.find("\"name\":\"b\"") == std::string::npos);
    BOOST_CHECK(sinks.out.find("\"quantum\":128") != std::string::npos);
    // b's stream was rescued to the new default; a's stayed on a, reopened.
    BOOST_CHECK_EQUAL(stream_field(*evicted_id, "device"), "c");
    BOOST_CHECK_EQUAL(stream_field(*stayer_id, "device"), "a");
    BOOST_REQUIRE(wait_for_more(*stayer_id, kQuarterSecond));
    BOOST_REQUIRE(wait_for_more(*evicted_id, kQuarterSecond));
    const ProgramResult stayed = stayer.stop();
    const ProgramResult moved = evicted.stop();
    BOOST_REQUIRE_MESSAGE(stayed.status == 0 && moved.status == 0, stayed.err << moved.err);
    BOOST_REQUIRE_EQUAL(server.stop(SIGTERM), 0);
    BOOST_CHECK_MESSAGE(server.log().find("reloaded " + server.dir() + "/audiod.conf") !=
                            std::string::npos,
                        server.log());

    // Every frame of each stream played once, in order, across the change.
    BOOST_CHECK_EQUAL(
        check_split_sequence({sequence_in(dir.file("a1.wav")), sequence_in(dir.file("a2.wav"))},
                             written_by(stayed)),
        2u);
    BOOST_CHECK_EQUAL(
        check_split_sequence({sequence_in(dir.file("b.wav")), sequence_in(dir.file("c.wav"))},
                             written_by(moved)),
        2u);
}

BOOST_AUTO_TEST_CASE(the_only_sink_is_reopened_in_place_on_sighup_and_rules_apply_at_once) {
    TempDir dir;
    ServerProcess server(kServer + file_sink("a", dir.file("a1.wav")));
    PlayingClient client({"--signal", "constant", "--value", "10000", "--app", "quiet"});
    const auto id = wait_for_app_stream("quiet");
    BOOST_REQUIRE(id);
    BOOST_REQUIRE(wait_for_position(*id, kQuarterSecond));
    configure(server,
              kServer + file_sink("a", dir.file("a2.wav")) + "[apps.quiet]\nvolume = \"50%\"\n");
    ::kill(server.pid(), SIGHUP);
    BOOST_REQUIRE(
        eventually([&] { return server.log().find("reloaded") != std::string::npos; }, 30s));
    BOOST_CHECK_MESSAGE(server.log().find("reopened sink a") != std::string::npos, server.log());
    // The rule applies to what plays now, from the reload on.
    BOOST_CHECK(eventually(
        [&] {
            const ProgramResult apps = run_tool("audioctl", {"--json", "list", "apps"});
            return apps.out.find("\"name\":\"quiet\",\"volume\":0.5") != std::string::npos;
        },
        30s));
    BOOST_REQUIRE(wait_for_more(*id, kQuarterSecond));
    BOOST_CHECK_EQUAL(client.stop().status, 0);
    BOOST_REQUIRE_EQUAL(server.stop(SIGTERM), 0);
    // From the reopened sink's first frame on: where the old sink's RT
    // thread had no cycle left to begin the change (a loaded machine; once
    // in a stress pass), the new one ramps from the old level, as every gain
    // change does (5 ms), and then plays nothing but the rule's level.
    const auto a2 = read_wav_s16(dir.file("a2.wav"));
    BOOST_CHECK_GT(std::count(a2.begin(), a2.end(), int16_t{5000}), 2 * 4800);
    const auto first = first_sound(a2, 2);
    BOOST_REQUIRE(first);
    constexpr size_t kRampFrames = 240; // Device::kRampMs at 48 kHz
    for (size_t i = 2 * (*first + kRampFrames); i < a2.size(); ++i) {
        if (a2[i] != 0 && a2[i] != 5000) {
            BOOST_ERROR("sample " << i << " of the reopened sink is " << a2[i]);
            break;
        }
    }
}

BOOST_AUTO_TEST_CASE(a_configuration_with_an_error_is_refused_whole_and_the_running_one_stays) {
    TempDir dir;
    const std::string good = kServer + file_sink("a", dir.file("a.wav"));
    ServerProcess server(good);
    const std::string conf = server.dir() + "/audiod.conf";
    const std::vector<std::pair<std::string, std::string>> cases = {
        // A syntax error anywhere, even after good changes.
        {good + file_sink("new", dir.file("n.wav")) + "[sinks.x]\ntype = \n",
         conf + ":14: syntax error"},
        {good + "[sinks.w]\ntype = \"warp-drive\"\n", conf + ":9: unknown sink type 'warp-drive'"},
        {good + "[sources.s]\ntype = \"null\"\nsink = \"nowhere\"\n",
         conf + ":9: sink = \"nowhere\": no sink has that name"},
        {good + "[apps.mpv]\nvolume = \"+5%\"\n", conf + ":10: volume '+5%' is a step"},
    };
    for (const auto& [text, message] : cases) {
        configure(server, text);
        const ProgramResult r = audioctl_reload();
        BOOST_CHECK_EQUAL(r.status, 1);
        BOOST_CHECK_MESSAGE(r.err.find(message) != std::string::npos,
                            "'" << r.err << "' lacks '" << message << "'");
    }
    // Nothing changed: the one sink runs as before.
    const ProgramResult sinks = run_tool("audioctl", {"--json", "list", "sinks"});
    BOOST_CHECK(sinks.out.find("\"name\":\"new\"") == std::string::npos);
    BOOST_CHECK(sinks.out.find("\"name\":\"a\"") != std::string::npos);
    // SIGHUP with a bad file says so in the log and keeps serving.
    ::kill(server.pid(), SIGHUP);
    BOOST_REQUIRE(eventually(
        [&] { return server.log().find("configuration refused") != std::string::npos; }, 30s));
    BOOST_CHECK_EQUAL(run_tool("audioctl", {"info"}).status, 0);

    // A sink that cannot open with its new settings keeps its old ones.
    configure(server, kServer + file_sink("a", "/nonexistent-dir/a.wav"));
    const ProgramResult partial = audioctl_reload();
    BOOST_CHECK_EQUAL(partial.status, 1);
    BOOST_CHECK_MESSAGE(partial.out.find("error: " + conf +
                                         ":5: cannot open sink 'a' with its new "
                                         "settings") != std::string::npos &&
                            partial.out.find("keeps its old ones") != std::string::npos,
                        partial.out << partial.err);
    BOOST_CHECK_EQUAL(run_program({bin("audiod-test-client"), "--frames", "4800"}, 60s).status, 0);
    BOOST_REQUIRE_EQUAL(server.stop(SIGTERM), 0);
    BOOST_CHECK_GE(read_wav_s16(dir.file("a.wav")).size(), 2u * 4800);
}

BOOST_AUTO_TEST_CASE(sources_come_change_and_go_with_the_file) {
    TempDir dir;
    const std::string sinks = kServer + file_sink("a", dir.file("a.wav"));
    ServerProcess server(sinks);
    const auto source = [&](const std::string& latency) {
        return "[sources.lan]\ntype = \"rtp\"\naddress = \"127.0.0.1\"\nport = 47312\n"
               "payload = \"l16\"\nlatency-ms = " +
               latency + "\n";
    };
    configure(server, sinks + source("40"));
    ProgramResult r = audioctl_reload();
    BOOST_CHECK_MESSAGE(r.status == 0 && r.out.find("opened source lan") != std::string::npos,
                        r.out << r.err);
    configure(server, sinks + source("80"));
    r = audioctl_reload();
    BOOST_CHECK_MESSAGE(r.status == 0 && r.out.find("reopened source lan") != std::string::npos,
                        r.out << r.err);
    BOOST_CHECK(run_tool("audioctl", {"list", "sources"}).out.find("lan") != std::string::npos);
    // Unchanged: nothing happens.
    r = audioctl_reload();
    BOOST_CHECK_MESSAGE(r.status == 0 &&
                            r.out.find("no sink or source changed") != std::string::npos,
                        r.out << r.err);
    configure(server, sinks);
    r = audioctl_reload();
    BOOST_CHECK_MESSAGE(r.status == 0 && r.out.find("closed source lan") != std::string::npos,
                        r.out << r.err);
    BOOST_CHECK(run_tool("audioctl", {"list", "sources"}).out.find("lan") == std::string::npos);
}

BOOST_AUTO_TEST_SUITE_END()
