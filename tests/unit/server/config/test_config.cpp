// The configuration file: what is accepted, and that every refusal names the
// file, the line and the reason.
#include "config/config.h"

#include <boost/test/unit_test.hpp>

#include <algorithm>

using namespace audiod;

namespace {

ServerConfig parse_ok(const std::string& text) {
    auto result = parse_config(text, "test.conf");
    if (auto* error = std::get_if<std::string>(&result)) {
        BOOST_FAIL("unexpected error: " << *error);
    }
    return std::get<ServerConfig>(result);
}

std::string parse_error(const std::string& text) {
    auto result = parse_config(text, "test.conf");
    BOOST_REQUIRE_MESSAGE(std::holds_alternative<std::string>(result), "accepted:\n" << text);
    return std::get<std::string>(result);
}

bool starts_with(const std::string& s, const std::string& prefix) {
    return s.rfind(prefix, 0) == 0;
}

} // namespace

BOOST_AUTO_TEST_SUITE(config)

BOOST_AUTO_TEST_CASE(full_configuration) {
    const auto c = parse_ok(R"(
[server]
rate = 44100
channels = 1
quantum = 64
default-sink = "rec"
rt-priority = 0

[sinks.zero]
type = "null"

[sinks.rec]
type = "file"
path = "/tmp/x.wav"
format = "f32le"
)");
    BOOST_CHECK_EQUAL(c.rate, 44100u);
    BOOST_CHECK_EQUAL(c.channels, 1u);
    BOOST_CHECK_EQUAL(c.quantum, 64u);
    BOOST_CHECK_EQUAL(c.rt_priority, 0);
    BOOST_CHECK_EQUAL(c.default_sink, "rec");
    BOOST_REQUIRE_EQUAL(c.sinks.size(), 2u);
    BOOST_CHECK_EQUAL(c.sinks[0].name, "zero"); // file order
    BOOST_CHECK_EQUAL(c.sinks[1].name, "rec");
    BOOST_CHECK_EQUAL(c.sinks[1].type, "file");
    BOOST_CHECK_EQUAL(c.sinks[1].line, 12u); // [sinks.rec]
    BOOST_REQUIRE_EQUAL(c.sinks[1].options.size(), 2u);
}

BOOST_AUTO_TEST_CASE(sinks_and_sources_are_bounded_together) {
    // At the bound, a server may be configured with every device it can
    // hold; one more is refused with the count and the bound.
    std::string text;
    for (size_t i = 0; i < kMaxDevices; ++i) {
        text +=
            (i % 4 == 3 ? "[sources.d" : "[sinks.d") + std::to_string(i) + "]\ntype = \"null\"\n";
    }
    BOOST_CHECK_EQUAL(parse_ok(text).sinks.size() + parse_ok(text).sources.size(), kMaxDevices);
    text += "[sinks.one-more]\ntype = \"null\"\n";
    BOOST_CHECK_EQUAL(parse_error(text), "test.conf:1: " + std::to_string(kMaxDevices + 1) +
                                             " sinks and sources configured; at most " +
                                             std::to_string(kMaxDevices));
}

BOOST_AUTO_TEST_CASE(defaults_and_first_sink_as_default) {
    const auto c = parse_ok("[sinks.b]\ntype = \"null\"\n[sinks.a]\ntype = \"null\"\n");
    BOOST_CHECK_EQUAL(c.rate, 48000u);
    BOOST_CHECK_EQUAL(c.channels, 2u);
    BOOST_CHECK_EQUAL(c.quantum, 256u);
    BOOST_CHECK_EQUAL(c.default_sink, "b");
}

BOOST_AUTO_TEST_CASE(sources_are_their_own_section) {
    const auto c = parse_ok(R"(
[server]
resample-quality = 8
[sinks.out]
type = "null"
[sources.mic]
type = "alsa"
device = "hw:1"
)");
    BOOST_CHECK_EQUAL(c.resample_quality, 8);
    BOOST_REQUIRE_EQUAL(c.sinks.size(), 1u);
    BOOST_REQUIRE_EQUAL(c.sources.size(), 1u);
    BOOST_CHECK_EQUAL(c.sources[0].name, "mic");
    BOOST_CHECK_EQUAL(c.sources[0].type, "alsa");
    BOOST_CHECK_EQUAL(c.default_sink, "out"); // a source is never the default sink
    BOOST_CHECK(
        starts_with(parse_error("[sinks.a]\ntype = \"null\"\n[sources.a]\ntype = \"alsa\"\n"),
                    "test.conf:3: source 'a' has the name of a sink"));
    BOOST_CHECK(starts_with(
        parse_error("[sinks.a]\ntype = \"null\"\n[sources.\"x.monitor\"]\ntype = \"alsa\"\n"),
        "test.conf:3: a source name must not end in .monitor"));
    BOOST_CHECK(starts_with(parse_error("[sinks.a]\ntype = \"null\"\n[sources.m]\nd = 1\n"),
                            "test.conf:3: source 'm' has no type"));
    BOOST_CHECK(starts_with(parse_error("[sources.m]\ntype = \"alsa\"\n"),
                            "test.conf:1: no sinks configured"));
    BOOST_CHECK(
        starts_with(parse_error("[server]\nresample-quality = 11\n[sinks.a]\ntype = \"null\"\n"),
                    "test.conf:2:"));
}

BOOST_AUTO_TEST_CASE(application_rules_take_levels_as_audioctl_does) {
    const auto c = parse_ok(R"(
[sinks.speakers]
type = "null"
[sinks.headphones]
type = "null"
[apps.mpv]
volume = "50%"
sink = "headphones"
[apps."Web Browser"]
volume = "-6dB"
mute = true
[apps.aplay]
volume = 0.25
)");
    BOOST_REQUIRE_EQUAL(c.apps.size(), 3u);
    const auto rule = [&](const std::string& app) {
        return *std::find_if(c.apps.begin(), c.apps.end(),
                             [&](const AppRule& r) { return r.app == app; });
    };
    BOOST_CHECK_EQUAL(rule("mpv").volume.value_or(0), 0.5f);
    BOOST_CHECK(!rule("mpv").muted.has_value());
    BOOST_CHECK_EQUAL(rule("mpv").sink, "headphones");
    BOOST_CHECK_CLOSE(rule("Web Browser").volume.value_or(0), 0.501187f, 0.01);
    BOOST_CHECK(rule("Web Browser").muted.value_or(false));
    BOOST_CHECK_EQUAL(rule("aplay").volume.value_or(0), 0.25f);

    const std::string sinks = "[sinks.a]\ntype = \"null\"\n";
    std::string e = parse_error(sinks + "[apps.mpv]\nvolume = \"+5%\"\n");
    BOOST_CHECK_MESSAGE(starts_with(e, "test.conf:4: volume '+5%' is a step"), e);
    e = parse_error(sinks + "[apps.mpv]\nvolume = \"loud\"\n");
    BOOST_CHECK_MESSAGE(starts_with(e, "test.conf:4: invalid volume 'loud'"), e);
    e = parse_error(sinks + "[apps.mpv]\nvolume = \"500%\"\n");
    BOOST_CHECK_MESSAGE(starts_with(e, "test.conf:4:"), e);
    e = parse_error(sinks + "[apps.mpv]\nmute = \"yes\"\n");
    BOOST_CHECK_MESSAGE(starts_with(e, "test.conf:4: mute must be true or false"), e);
    e = parse_error(sinks + "[apps.mpv]\nsink = \"nowhere\"\n");
    BOOST_CHECK_MESSAGE(starts_with(e, "test.conf:3: application 'mpv' names sink 'nowhere'"), e);
    e = parse_error(sinks + "[apps.mpv]\ncolour = \"red\"\n");
    BOOST_CHECK_MESSAGE(starts_with(e, "test.conf:4: unknown key 'colour' in [apps.mpv]"), e);
    e = parse_error(sinks + "[apps]\nmpv = 3\n");
    BOOST_CHECK_MESSAGE(starts_with(e, "test.conf:4: application 'mpv' must be a table"), e);
}

// A group is an rtp sink of its name with the table's other keys as its
// options (sending through silence unless told), a link offset and its
// local members.
BOOST_AUTO_TEST_CASE(a_group_is_an_rtp_sink_with_local_members) {
    const auto c = parse_ok(R"(
[sinks.speakers]
type = "null"
[sinks.tv]
type = "null"
[groups.house]
destination = "239.10.10.1"
payload = "l24"
link-offset-ms = 200
local = ["speakers", { sink = "tv", delay-ms = 40, volume = "80%", mute = true }]
)");
    BOOST_REQUIRE_EQUAL(c.sinks.size(), 3u);
    const DeviceConfig& sink = c.sinks[2];
    BOOST_CHECK_EQUAL(sink.name, "house");
    BOOST_CHECK_EQUAL(sink.type, "rtp");
    const std::vector<std::pair<std::string, std::string>> options = {
        {"destination", "239.10.10.1"}, {"payload", "l24"}, {"suppress-silence", "false"}};
    BOOST_CHECK(sink.options == options);
    BOOST_REQUIRE_EQUAL(c.groups.size(), 1u);
    const GroupConfig& g = c.groups[0];
    BOOST_CHECK_EQUAL(g.name, "house");
    BOOST_CHECK_EQUAL(g.link_offset_ms, 200u);
    BOOST_REQUIRE_EQUAL(g.local.size(), 2u);
    BOOST_CHECK_EQUAL(g.local[0].sink, "speakers");
    BOOST_CHECK_EQUAL(g.local[0].delay_ms, 0u);
    BOOST_CHECK(!g.local[0].volume && !g.local[0].muted);
    BOOST_CHECK_EQUAL(g.local[1].sink, "tv");
    BOOST_CHECK_EQUAL(g.local[1].delay_ms, 40u);
    BOOST_CHECK_CLOSE(g.local[1].volume.value_or(0), 0.8f, 1e-4);
    BOOST_CHECK(g.local[1].muted.value_or(false));

    const auto quiet = parse_ok("[groups.house]\nsuppress-silence = true\nlocal = []\n");
    BOOST_CHECK_EQUAL(quiet.groups[0].link_offset_ms, GroupConfig::kDefaultLinkOffsetMs);
    BOOST_CHECK(quiet.sinks[0].options ==
                (std::vector<std::pair<std::string, std::string>>{{"suppress-silence", "true"}}));
}

BOOST_AUTO_TEST_CASE(a_group_that_cannot_work_is_refused_with_its_reason) {
    const std::string sinks = "[sinks.speakers]\ntype = \"null\"\n";
    const auto refused = [&](const std::string& group, const std::string& reason) {
        const std::string error = parse_error(sinks + group);
        BOOST_CHECK_MESSAGE(error.find(reason) != std::string::npos, error);
        BOOST_CHECK_MESSAGE(starts_with(error, "test.conf:"), error);
    };
    refused("[groups.house]\ntype = \"null\"\n", "takes no type");
    refused("[groups.house]\nlocal = [\"nowhere\"]\n", "'nowhere' is not a configured sink");
    refused("[groups.house]\nlocal = [\"house\"]\n", "is a group");
    refused("[groups.house]\nlocal = [\"speakers\", \"speakers\"]\n", "listed twice");
    refused("[groups.house]\nlocal = [{ delay-ms = 5 }]\n", "without sink");
    refused("[groups.house]\nlocal = [{ sink = \"speakers\", late = 5 }]\n", "unknown key 'late'");
    refused("[groups.house]\nlocal = [7]\n", "a sink's name or");
    refused(
        "[groups.house]\nlink-offset-ms = 100\nlocal = [{ sink = \"speakers\", delay-ms = 90 }]\n",
        "leaves less than 20 ms");
    refused("[groups.house]\nlink-offset-ms = 5\n", "out of range");
    refused("[groups.house]\nlocal = [{ sink = \"speakers\", volume = \"+5%\" }]\n", "is a step");
    refused("[groups.speakers]\n", "both a sink and a group");
    refused("[groups.\"no way\"]\n", "invalid group name");
}

BOOST_AUTO_TEST_CASE(options_of_any_scalar_type_become_text) {
    const auto c = parse_ok("[sinks.x]\ntype = \"null\"\nn = 5\nf = 0.5\nb = true\n");
    BOOST_REQUIRE_EQUAL(c.sinks[0].options.size(), 3u);
}

BOOST_AUTO_TEST_CASE(the_pulse_table_is_optional_and_checked) {
    const auto plain = parse_ok("[sinks.a]\ntype = \"null\"\n");
    BOOST_CHECK(!plain.pulse.enable);
    BOOST_CHECK(plain.pulse.socket.empty());
    BOOST_CHECK(plain.pulse.shared_memory);
    const auto set = parse_ok("[sinks.a]\ntype = \"null\"\n[pulse]\nenable = false\nsocket = "
                              "\"/run/x/native\"\nshared-memory = false\n");
    BOOST_CHECK(set.pulse.enable == std::optional<bool>(false));
    BOOST_CHECK(!set.pulse.shared_memory);
    BOOST_CHECK_EQUAL(set.pulse.socket, "/run/x/native");
    std::string e = parse_error("[sinks.a]\ntype = \"null\"\n[pulse]\nsocket = \"native\"\n");
    BOOST_CHECK_MESSAGE(starts_with(e, "test.conf:4: socket must be an absolute path"), e);
    e = parse_error("[sinks.a]\ntype = \"null\"\n[pulse]\nenable = 1\n");
    BOOST_CHECK_MESSAGE(starts_with(e, "test.conf:4: enable must be true or false"), e);
    const auto tcp = parse_ok("[sinks.a]\ntype = \"null\"\n[pulse]\ntcp = \"4713\"\ncookie = "
                              "\"/home/u/c\"\n");
    BOOST_CHECK_EQUAL(tcp.pulse.tcp, "4713");
    BOOST_CHECK_EQUAL(tcp.pulse.cookie, "/home/u/c");
    BOOST_CHECK_EQUAL(
        parse_ok("[sinks.a]\ntype = \"null\"\n[pulse]\ntcp = \"[::1]:4713\"\n").pulse.tcp,
        "[::1]:4713");
    for (const char* bad : {"\"0\"", "\"65536\"", "\":4713\"", "\"host:\"", "\"x\"", "4713"}) {
        e = parse_error(std::string("[sinks.a]\ntype = \"null\"\n[pulse]\ntcp = ") + bad + "\n");
        BOOST_CHECK_MESSAGE(starts_with(e, "test.conf:4: tcp must be"), e);
    }
    e = parse_error("[sinks.a]\ntype = \"null\"\n[pulse]\ncookie = \"c\"\n");
    BOOST_CHECK_MESSAGE(starts_with(e, "test.conf:4: cookie must be an absolute path"), e);
    e = parse_error("[sinks.a]\ntype = \"null\"\n[pulse]\nshared-memory = \"yes\"\n");
    BOOST_CHECK_MESSAGE(starts_with(e, "test.conf:4: shared-memory must be true or false"), e);
    e = parse_error("[sinks.a]\ntype = \"null\"\n[pulse]\nudp = true\n");
    BOOST_CHECK_MESSAGE(starts_with(e, "test.conf:4: unknown key 'udp' in [pulse]"), e);
}

BOOST_AUTO_TEST_CASE(errors_name_file_and_line) {
    // Syntax error on line 3.
    std::string e = parse_error("[server]\nrate = 48000\nquantum = = 5\n");
    BOOST_CHECK_MESSAGE(starts_with(e, "test.conf:3: "), e);

    e = parse_error("[server]\nrate = 48000\nspeed = 3\n[sinks.a]\ntype=\"null\"\n");
    BOOST_CHECK_MESSAGE(starts_with(e, "test.conf:3: unknown key 'speed'"), e);

    e = parse_error("[server]\n\nrate = \"fast\"\n[sinks.a]\ntype=\"null\"\n");
    BOOST_CHECK_MESSAGE(starts_with(e, "test.conf:3: rate must be an integer"), e);

    e = parse_error("[server]\nquantum = 3\n[sinks.a]\ntype=\"null\"\n");
    BOOST_CHECK_MESSAGE(starts_with(e, "test.conf:2: quantum = 3 is out of range"), e);

    e = parse_error("[sinks.a]\ntype=\"null\"\n\n[speakers]\nx = 1\n");
    BOOST_CHECK_MESSAGE(starts_with(e, "test.conf:4: unknown section 'speakers'"), e);

    e = parse_error("[server]\ndefault-sink = \"nope\"\n[sinks.a]\ntype=\"null\"\n");
    BOOST_CHECK_MESSAGE(starts_with(e, "test.conf:2: default-sink 'nope'"), e);

    e = parse_error("[server]\ndefault-source = \"b.monitor\"\n[sinks.a]\ntype=\"null\"\n");
    BOOST_CHECK_MESSAGE(starts_with(e, "test.conf:2: default-source 'b.monitor' is neither"), e);
    BOOST_CHECK_EQUAL(
        parse_ok("[server]\ndefault-source = \"a.monitor\"\n[sinks.a]\ntype=\"null\"\n")
            .default_source,
        "a.monitor");

    e = parse_error("[sinks.a]\ntype = \"null\"\n[sinks.b]\npath = \"x\"\n");
    BOOST_CHECK_MESSAGE(starts_with(e, "test.conf:3: sink 'b' has no type"), e);

    e = parse_error("[sinks.\"bad name\"]\ntype = \"null\"\n");
    BOOST_CHECK_MESSAGE(starts_with(e, "test.conf:1: invalid sink name"), e);

    e = parse_error("[sinks.a]\ntype = \"null\"\nlist = [1, 2]\n");
    BOOST_CHECK_MESSAGE(starts_with(e, "test.conf:3: option list must be"), e);

    e = parse_error("[server]\nrate = 48000\n");
    BOOST_CHECK_MESSAGE(e.find("no sinks configured") != std::string::npos, e);
}

BOOST_AUTO_TEST_CASE(garbage_never_throws) {
    const char* inputs[] = {"",
                            "\x01\x02",
                            "[",
                            "a=",
                            "[sinks]\nx=1",
                            "[[sinks]]\ntype=1",
                            "[server]\nrate=99999999999999999999999"};
    for (const char* text : inputs) {
        const auto result = parse_config(text, "g.conf");
        BOOST_CHECK(std::holds_alternative<std::string>(result));
    }
}

BOOST_AUTO_TEST_CASE(missing_file_is_reported) {
    const auto result = load_config("/nonexistent/audiod.conf");
    BOOST_REQUIRE(std::holds_alternative<std::string>(result));
    BOOST_CHECK(starts_with(std::get<std::string>(result), "/nonexistent/audiod.conf: "));
}

BOOST_AUTO_TEST_SUITE_END()
