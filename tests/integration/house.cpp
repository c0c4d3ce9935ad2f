#include "house.h"

#include <boost/test/results_collector.hpp>
#include <boost/test/unit_test.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <sstream>
#include <unistd.h>

using namespace std::chrono_literals;

namespace audiod::test {

std::string room_sink(const TempDir& dir, const std::string& name, int ppm) {
    return "[sinks." + name + "]\ntype = \"file\"\nformat = \"f32le\"\npath = \"" +
           dir.file(name + ".wav") + "\"\nplay-times = \"" + dir.file(name + ".times") +
           "\"\nclock-ppm = " + std::to_string(ppm) + "\n";
}

std::string room_measure(const TempDir& dir, const std::string& name) {
    return name + "=" + dir.file(name + ".wav") + "," + dir.file(name + ".times");
}

std::string json_line(const std::string& out, const std::string& key) {
    const size_t at = out.find(key);
    return at == std::string::npos ? "" : out.substr(at, out.find('\n', at) - at);
}

House::House(const TempDir& dir_in, std::vector<std::pair<std::string, int>> rooms_in,
             std::string payload_in)
    : dir(dir_in)
    , rooms(std::move(rooms_in))
    , payload(std::move(payload_in))
    , port(free_udp_port_pair())
    , group("239.255.88." + std::to_string(port % 250 + 1)) {}

std::string House::sender_options() const {
    return "destination=" + group + " port=" + std::to_string(port) + " payload=" + payload +
           (sender_extra.empty() ? "" : " " + sender_extra);
}

std::string House::receiver_options(const std::string& room) const {
    // Through a network of its own (a relay), or from the group.
    const auto own = networks.find(room);
    const std::string from = own != networks.end()
                                 ? "address=127.0.0.1 port=" + std::to_string(own->second)
                                 : "address=" + group + " port=" + std::to_string(port);
    const auto delay = delays.find(room);
    const auto extra = receiver_extra.find(room);
    return from + " payload=" + payload + " payload-type=" + std::to_string(payload_type) +
           " latency-ms=30 link-offset-ms=" + std::to_string(kLinkOffsetMs) +
           (delay != delays.end() ? " delay-ms=" + std::to_string(delay->second) : "") +
           (extra != receiver_extra.end() ? " " + extra->second : "") + " sink=" + room;
}

std::string House::toml(const std::string& options) {
    std::string out;
    size_t at = 0;
    while (at < options.size()) {
        const size_t end = std::min(options.find(' ', at), options.size());
        const std::string item = options.substr(at, end - at);
        const size_t eq = item.find('=');
        const std::string value = item.substr(eq + 1);
        const bool number = value.find_first_not_of("0123456789") == std::string::npos;
        out += item.substr(0, eq) + " = " + (number ? value : "\"" + value + "\"") + "\n";
        at = end + 1;
    }
    return out;
}

std::string House::config(const std::string& extra) const {
    std::string c = "[server]\nrt-priority = 0\ndefault-sink = \"spare\"\n\n"
                    "[sinks.spare]\ntype = \"null\"\n\n";
    if (!own_sender) {
        // another program sends
    } else if (local.empty()) {
        c += "[sinks.net]\ntype = \"rtp\"\n" + toml(sender_options()) + "\n";
    } else {
        c += "[groups.net]\n" + toml(sender_options()) +
             "link-offset-ms = " + std::to_string(kLinkOffsetMs) + "\nlocal = [";
        for (const Local& member : local) {
            c += "{ sink = \"" + member.name + "\", delay-ms = " + std::to_string(member.delay_ms) +
                 " }" + (&member == &local.back() ? "" : ", ");
        }
        c += "]\n\n";
        for (const Local& member : local) {
            c += room_sink(dir, member.name, member.ppm) + "\n";
        }
    }
    for (const auto& [name, ppm] : rooms) {
        c += room_sink(dir, name, ppm) + "\n[sources.rx-" + name + "]\ntype = \"rtp\"\n" +
             toml(receiver_options(name)) + "\n";
    }
    return c + extra;
}

std::vector<std::string> House::measured_rooms() const {
    std::vector<std::string> out;
    for (const auto& [name, ppm] : rooms) {
        out.push_back(room_measure(dir, name));
    }
    for (const Local& member : local) {
        out.push_back(room_measure(dir, member.name));
    }
    out.insert(out.end(), also_measured.begin(), also_measured.end());
    return out;
}

House::~House() {
    const auto& test = boost::unit_test::framework::current_test_case();
    if (!boost::unit_test::results_collector.results(test.p_id).passed()) {
        keep_recordings();
    }
}

void House::keep_recordings() const {
    const char* keep = std::getenv("AUDIOD_TEST_KEEP");
    if (keep == nullptr || *keep == '\0') {
        return;
    }
    const auto& test = boost::unit_test::framework::current_test_case();
    const std::string to =
        std::string(keep) + "/" + test.p_name.get() + "-" + std::to_string(::getpid());
    std::filesystem::create_directories(to);
    for (const auto& entry : std::filesystem::directory_iterator(dir.path())) {
        const std::string name = entry.path().filename();
        if (name.ends_with(".wav") || name.ends_with(".times")) {
            std::filesystem::copy_file(entry.path(), to + "/" + name);
        }
    }
    std::fprintf(stderr, "the rooms' recordings are kept in %s\n", to.c_str());
}

std::string House::measure(double settle_s, bool bursts) const {
    std::vector<std::string> args = {
        "measure", "--json", "--series", "--settle", std::to_string(settle_s), "--bound-us", "100"};
    if (bursts) {
        args.emplace_back("--bursts");
    }
    for (std::string& room : measured_rooms()) {
        args.push_back(std::move(room));
    }
    const ProgramResult measured = run_tool("audiod-sync-probe", args);
    BOOST_REQUIRE_MESSAGE(measured.status == 0, measured.err);
    return measured.out;
}

std::vector<std::string> probe_player(const TempDir& dir, double seconds, bool ramp,
                                      const std::string& sink) {
    std::vector<std::string> make = {"make", "--seconds", std::to_string(seconds)};
    if (!ramp) {
        make.emplace_back("--no-ramp");
    }
    make.push_back(dir.file("probe.wav"));
    const ProgramResult made = run_tool("audiod-sync-probe", make);
    BOOST_REQUIRE_MESSAGE(made.status == 0, made.err);
    return {bin("audioplay"),     "--quiet", "--sink", sink, "--latency-ms", "500",
            dir.file("probe.wav")};
}

After series_after(const std::string& out, const std::string& pair, double from_s,
                   double bound_us) {
    After after;
    std::istringstream lines(out);
    std::string line;
    const std::string key = "series " + pair + " ";
    while (std::getline(lines, line)) {
        if (line.rfind(key, 0) != 0) {
            continue;
        }
        std::istringstream fields(line.substr(key.size()));
        double t = 0, delta = 0;
        fields >> t >> delta;
        if (t < from_s) {
            continue;
        }
        if (after.points++ == 0) {
            after.first_s = t;
        }
        after.max_us = std::max(after.max_us, std::fabs(delta));
        if (std::fabs(delta) > bound_us) {
            after.settled_s = -1;
            after.settled_points = 0;
        } else if (after.settled_points++ == 0) {
            after.settled_s = t;
        }
        if (after.rejoined_s < 0 && after.settled_s >= 0 && t - after.settled_s >= 1.0) {
            after.rejoined_s = after.settled_s;
        }
    }
    return after;
}

double gap_start(const std::string& out, const std::string& pair) {
    std::istringstream lines(out);
    std::string line;
    const std::string key = "series " + pair + " ";
    double last = -1, longest = 0, start = -1;
    while (std::getline(lines, line)) {
        if (line.rfind(key, 0) == 0) {
            const double t = std::stod(line.substr(key.size()));
            if (last >= 0 && t - last > longest) {
                longest = t - last;
                start = last;
            }
            last = t;
        }
    }
    return start;
}

void wait_until_rooms_heard(const House& house) {
    const uint64_t after = (House::kLinkOffsetMs + 500) * 48;
    for (const auto& [name, ppm] : house.rooms) {
        const std::string rx = "rx-" + name;
        if (house.local.empty()) {
            BOOST_REQUIRE_MESSAGE(
                eventually([&] { return source_field(rx, "session") == "idle"; }, 60s),
                run_tool("audioctl", {"list", "sources"}).out);
        }
        const auto stream = static_cast<uint32_t>(source_number(rx, "play-stream"));
        BOOST_REQUIRE_NE(stream, 0u);
        BOOST_REQUIRE(wait_for_more(stream, after, 60s));
    }
    for (const House::Local& member : house.local) {
        const std::string field = group_member_field("net", member.name, "stream");
        BOOST_REQUIRE_MESSAGE(!field.empty(), run_tool("audioctl", {"list", "groups"}).out);
        const auto stream = static_cast<uint32_t>(std::stoul(field));
        BOOST_REQUIRE(wait_for_more(stream, after, 60s));
    }
}

namespace {

// A field of one member of a group as `audioctl --json list groups`
// prints it: in the group's `array` ("local" or "rooms"), the object whose
// `id` ("sink" or "name") is `member`; its `key` as text ("" if none).
// Read through audioctl, so that what it makes of the sink's details is
// tested too.
std::string listed_member_field(const std::string& group, const std::string& array,
                                const std::string& id, const std::string& member,
                                const std::string& key) {
    const std::string json = run_tool("audioctl", {"--json", "list", "groups"}).out;
    size_t at = json.find("{\"name\":\"" + group + "\"");
    if (at == std::string::npos ||
        (at = json.find("\"" + array + "\":[", at)) == std::string::npos) {
        return "";
    }
    const size_t array_end = json.find(']', at);
    const size_t item = json.find("\"" + id + "\":\"" + member + "\"", at);
    if (item == std::string::npos || item > array_end) {
        return "";
    }
    const size_t object = json.rfind('{', item);
    const size_t object_end = json.find('}', item);
    const size_t k = json.find("\"" + key + "\":", object);
    if (k == std::string::npos || k > object_end) {
        return "";
    }
    size_t v = k + key.size() + 3;
    const bool quoted = json[v] == '"';
    v += quoted ? 1 : 0;
    return json.substr(v, json.find_first_of(quoted ? "\"" : ",}", v) - v);
}

} // namespace

std::string group_member_field(const std::string& group, const std::string& sink,
                               const std::string& key) {
    return listed_member_field(group, "local", "sink", sink, key);
}

std::string group_room_field(const std::string& group, const std::string& room,
                             const std::string& key) {
    return listed_member_field(group, "rooms", "name", room, key);
}

void ctl_with_options(std::vector<std::string> args, const std::string& options) {
    std::istringstream words(options);
    for (std::string word; words >> word;) {
        args.push_back(word);
    }
    ctl_ok(args);
}

void check_pairs_in_step(const std::string& out, uint64_t points,
                         const std::vector<std::string>& pairs) {
    for (size_t at = 0; (at = out.find("{\"pair\"", at)) != std::string::npos; ++at) {
        const std::string line = json_line(out.substr(at), "{\"pair\"");
        if (!pairs.empty() && std::none_of(pairs.begin(), pairs.end(), [&](const std::string& p) {
                return line.find("\"pair\":\"" + p + "\"") != std::string::npos;
            })) {
            continue;
        }
        BOOST_TEST_MESSAGE(line);
        BOOST_CHECK_GE(json_number(line, "points").value_or(0), points);
        BOOST_CHECK_MESSAGE(json_real(line, "p999_us").value_or(1e9) <= 100, line);
        const auto converged = json_real(line, "converged_s");
        BOOST_CHECK_MESSAGE(converged && *converged >= 0 && *converged <= 5, line);
    }
}

} // namespace audiod::test
