// Events as they happen: `audioctl watch` and the C API subscription.
#include "helpers.h"

#include <boost/test/unit_test.hpp>

#include <csignal>
#include <sstream>
#include <thread>

using namespace audiod;
using namespace audiod::test;
using namespace std::chrono_literals;

namespace {

std::vector<std::string> lines_of(const std::string& text) {
    std::vector<std::string> lines;
    std::istringstream in(text);
    for (std::string line; std::getline(in, line);) {
        lines.push_back(line);
    }
    return lines;
}

bool shows(const BackgroundProgram& program, const std::vector<std::string>& needles) {
    return eventually(
        [&] {
            const std::string out = program.output_so_far();
            for (const auto& needle : needles) {
                if (out.find(needle) == std::string::npos) {
                    return false;
                }
            }
            return true;
        },
        30s);
}

// Index of the first line at or after `from` that contains every needle.
size_t find_line(const std::vector<std::string>& lines, size_t from,
                 const std::vector<std::string>& needles) {
    for (size_t i = from; i < lines.size(); ++i) {
        bool all = true;
        for (const auto& needle : needles) {
            all = all && lines[i].find(needle) != std::string::npos;
        }
        if (all) {
            return i;
        }
    }
    return lines.size();
}

} // namespace

BOOST_AUTO_TEST_SUITE(events)

BOOST_AUTO_TEST_CASE(watch_prints_each_event_as_json_lines_in_order) {
    TempDir dir;
    ServerProcess server("[server]\nrt-priority = 0\n[sinks.a]\ntype = \"null\"\n");
    BackgroundProgram watch({bin("audioctl"), "--json", "watch"});
    wait_until_watching(watch);
    ctl_ok({"load-sink", "file", "b", "path=" + dir.file("b.wav")});
    ctl_ok({"set-default-sink", "b"});
    PlayingClient client({"--app", "ev"});
    const auto id = wait_for_stream(30s);
    BOOST_REQUIRE(id);
    ctl_ok({"set-volume", std::to_string(*id), "50%"});
    ctl_ok({"set-volume", "app:ev", "80%"});
    ctl_ok({"mute", "sink:a", "on"});
    ctl_ok({"move-stream", std::to_string(*id), "a"});
    // The stream is reported running when the RT thread gets there, not at
    // a fixed point among the commands: it plays on until that is seen.
    const std::string stream = "\"stream\":" + std::to_string(*id);
    BOOST_CHECK(eventually(
        [&] {
            const auto lines = lines_of(watch.output_so_far());
            return find_line(lines, 0,
                             {"\"event\":\"stream-changed\"", stream, "\"state\":\"running\""}) <
                   lines.size();
        },
        30s));
    BOOST_CHECK_EQUAL(client.stop().status, 0);
    ctl_ok({"unload-sink", "b"});
    BOOST_CHECK(shows(watch, {"\"event\":\"stream-removed\",\"stream\":" + std::to_string(*id),
                              "\"event\":\"sink-removed\",\"app\":\"\",\"device\":\"b\""}));
    ::kill(watch.pid(), SIGINT);
    const ProgramResult r = watch.finish(10s);
    BOOST_CHECK_EQUAL(r.status, 0);

    const auto lines = lines_of(r.out);
    for (const auto& line : lines) {
        BOOST_CHECK_MESSAGE(line.front() == '{' && line.back() == '}', line);
    }
    size_t at = 0;
    const std::vector<std::vector<std::string>> expected = {
        {"\"event\":\"sink-added\"", "\"device\":\"b\""},
        {"\"event\":\"default-changed\"", "\"device\":\"b\"", "\"previous_device\":\"a\""},
        {"\"event\":\"stream-added\"", stream, "\"app\":\"ev\"", "\"device\":\"b\""},
        {"\"event\":\"stream-changed\"", stream, "\"volume\":0.5"},
        {"\"event\":\"app-changed\"", "\"app\":\"ev\"", "\"volume\":0.8"},
        {"\"event\":\"sink-changed\"", "\"device\":\"a\"", "\"muted\":true"},
        {"\"event\":\"stream-moved\"", stream, "\"device\":\"a\"", "\"previous_device\":\"b\""},
    };
    for (const auto& needles : expected) {
        const size_t found = find_line(lines, at, needles);
        BOOST_CHECK_MESSAGE(found < lines.size(), "missing, in order: " << needles.front() << "\n"
                                                                        << r.out);
        at = found < lines.size() ? found + 1 : at;
    }
    // After the move, in either order: the stream is freed when its RT
    // thread lets go, which may come after b's unloading.
    BOOST_CHECK(find_line(lines, at, {"\"event\":\"stream-removed\"", stream}) < lines.size());
    BOOST_CHECK(find_line(lines, at, {"\"event\":\"sink-removed\"", "\"device\":\"b\""}) <
                lines.size());
}

BOOST_AUTO_TEST_CASE(watch_in_text_ends_when_the_server_goes) {
    ServerProcess server("[server]\nrt-priority = 0\n[sinks.a]\ntype = \"null\"\n");
    BackgroundProgram watch({bin("audioctl"), "watch"});
    wait_until_watching(watch);
    ctl_ok({"load-sink", "null", "z"});
    BOOST_CHECK(shows(watch, {"sink-added device=z"}));
    BOOST_REQUIRE_EQUAL(server.stop(SIGTERM), 0);
    const ProgramResult r = watch.finish(10s);
    BOOST_CHECK_EQUAL(r.status, 1);
    BOOST_CHECK(r.out.find("sink-added device=z") != std::string::npos);
    BOOST_CHECK(r.err.find("the server went away") != std::string::npos);
}

BOOST_AUTO_TEST_CASE(c_api_subscription_through_the_pollable_fd) {
    ServerProcess server("[server]\nrt-priority = 0\n[sinks.a]\ntype = \"null\"\n");
    BackgroundProgram events({bin("audiod-event-client"), "3", "30"});
    BOOST_REQUIRE(shows(events, {"subscribed"}));
    ctl_ok({"load-sink", "null", "n1"});
    ctl_ok({"set-default-sink", "n1"});
    ctl_ok({"unload-sink", "n1"});
    const ProgramResult r = events.finish(20s);
    BOOST_REQUIRE_MESSAGE(r.status == 0, r.err);
    const auto lines = lines_of(r.out);
    BOOST_TEST_INFO("events seen:\n" << r.out);
    BOOST_REQUIRE_EQUAL(lines.size(), 4u);
    BOOST_CHECK_EQUAL(lines[0], "subscribed");
    BOOST_CHECK(lines[1].find("sink-added kind=5") == 0 &&
                lines[1].find("sink=n1") != std::string::npos);
    BOOST_CHECK_MESSAGE(lines[2].find("default-changed kind=8") == 0 &&
                            lines[2].find("from=a") != std::string::npos,
                        r.out);
    BOOST_CHECK(lines[3].find("sink-removed kind=6") == 0);
}

BOOST_AUTO_TEST_CASE(introspection_info_and_clients) {
    ServerProcess server("[server]\nrt-priority = 0\n[sinks.a]\ntype = \"null\"\n");
    PlayingClient client({"--app", "introspect"});
    const auto id = wait_for_stream(30s);
    BOOST_REQUIRE(id);
    ProgramResult r = run_tool("audioctl", {"--json", "list", "clients"});
    BOOST_REQUIRE_EQUAL(r.status, 0);
    BOOST_CHECK(r.out.find("\"app\":\"introspect\"") != std::string::npos);
    BOOST_CHECK(r.out.find("\"executable\":\"audiod-test-cli\"") != std::string::npos);
    BOOST_CHECK(r.out.find("\"pid\":" + std::to_string(client.pid())) != std::string::npos);
    BOOST_CHECK(r.out.find("\"streams\":[" + std::to_string(*id) + "]") != std::string::npos);
    r = run_tool("audioctl", {"list", "clients"});
    BOOST_CHECK(r.out.find("introspect") != std::string::npos);
    r = run_tool("audioctl", {"--json", "info"});
    for (const char* key : {"\"version\":", "\"scheduling\":", "\"uptime_ms\":", "\"clients\":",
                            "\"streams\":1", "\"state_file\":", "\"quantum\":256"}) {
        BOOST_CHECK_MESSAGE(r.out.find(key) != std::string::npos, key << " in " << r.out);
    }
    r = run_tool("audioctl", {"--json", "mute", std::to_string(*id), "toggle"});
    BOOST_CHECK_EQUAL(r.out, "{\"ok\":true}\n");
    BOOST_CHECK_EQUAL(client.stop().status, 0);
}

BOOST_AUTO_TEST_SUITE_END()
