#include "config/config.h"

#include "audiod/audiod.h"

#include "engine/app_name.h"

#include "common/volume_level.h"
#include "config/config_keys.h"
#include "config/toml_guard.h"
#include "config/toml_parser.h"
#include "os/executable_directory.h"

#include <algorithm>
#include <climits>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <unistd.h>

namespace audiod {

namespace {

// toml++ reports syntax errors with exceptions; everything below converts
// them, and our own checks, to "file:line: reason" at this one boundary.
// (toml++ rather than toml11: Debian's toml11 3.7.1 reads out of bounds on
// some malformed input, found by tests/fuzz/fuzz_config.)
struct ConfigError {
    std::string message;
};

unsigned line_of(const toml::node& node) {
    return node.source().begin.line;
}

[[noreturn]] void fail(const std::string& source, unsigned line, const std::string& reason) {
    throw ConfigError{source + ":" + std::to_string(line) + ": " + reason};
}

std::string describe_type(const toml::node& node) {
    std::ostringstream out;
    out << node.type();
    return out.str();
}

uint32_t read_uint(const toml::node& value, const std::string& key, int64_t min, int64_t max,
                   const std::string& source) {
    if (!value.is_integer()) {
        fail(source, line_of(value), key + " must be an integer, not " + describe_type(value));
    }
    const int64_t n = value.as_integer()->get();
    if (n < min || n > max) {
        fail(source, line_of(value),
             key + " = " + std::to_string(n) + " is out of range (" + std::to_string(min) + ".." +
                 std::to_string(max) + ")");
    }
    return static_cast<uint32_t>(n);
}

bool is_valid_name(std::string_view name) {
    if (name.empty() || name.size() > 64) {
        return false;
    }
    return std::all_of(name.begin(), name.end(), [](char c) {
        return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
               c == '-' || c == '_' || c == '.';
    });
}

std::string option_text(const toml::node& value, const std::string& key,
                        const std::string& source) {
    if (const auto* text = value.as_string()) {
        return text->get();
    }
    if (const auto* integer = value.as_integer()) {
        return std::to_string(integer->get());
    }
    if (const auto* number = value.as_floating_point()) {
        std::ostringstream out;
        out << number->get();
        return out.str();
    }
    if (const auto* flag = value.as_boolean()) {
        return flag->get() ? "true" : "false";
    }
    fail(source, line_of(value),
         "option " + key + " must be a string, number or boolean, not " + describe_type(value));
}

// Where default-sink and default-source were set (0: not).
struct DefaultLines {
    unsigned sink = 0;
    unsigned source = 0;
};

DefaultLines read_server_table(const toml::node& node, ServerConfig& config) {
    const std::string& src = config.source;
    const toml::table* table = node.as_table();
    if (table == nullptr) {
        fail(src, line_of(node), "[server] must be a table");
    }
    DefaultLines lines;
    for (const auto& [k, value] : *table) {
        const std::string key(k.str());
        // Named, not the binding itself: clang 14 (Debian 12's, which
        // builds the fuzzers) cannot capture a structured binding.
        const toml::node& entry = value;
        const auto bounded = [&](std::string_view name) {
            const ConfigKey& spec = config_key("server", name);
            return read_uint(entry, key, spec.min, spec.max, src);
        };
        if (key == "rate") {
            config.rate = bounded(key);
        } else if (key == "channels") {
            config.channels = bounded(key);
        } else if (key == "quantum") {
            config.quantum = bounded(key);
        } else if (key == "rt-priority") {
            config.rt_priority = static_cast<int>(bounded(key));
        } else if (key == "stall-timeout-ms") {
            config.stall_timeout_ms = bounded(key);
        } else if (key == "resample-quality") {
            config.resample_quality = static_cast<int>(bounded(key));
        } else if (key == "client-memory-mb") {
            config.client_memory_mb = bounded(key);
        } else if (key == "default-sink") {
            if (!value.is_string()) {
                fail(src, line_of(value), "default-sink must be a string");
            }
            config.default_sink = value.as_string()->get();
            lines.sink = line_of(value);
        } else if (key == "default-source") {
            if (!value.is_string()) {
                fail(src, line_of(value), "default-source must be a string");
            }
            config.default_source = value.as_string()->get();
            lines.source = line_of(value);
        } else {
            fail(src, line_of(value),
                 "unknown key '" + key + "' in [server] (known: " + known_keys("server") + ")");
        }
    }
    return lines;
}

// [sinks.NAME] or, with `capture`, [sources.NAME] tables.
void read_sinks_table(const toml::node& node, ServerConfig& config, bool capture) {
    const std::string& src = config.source;
    const std::string kind = capture ? "source" : "sink";
    const std::string section = capture ? "sources" : "sinks";
    const toml::table* table = node.as_table();
    if (table == nullptr) {
        fail(src, line_of(node),
             "[" + section + "] must hold one table per " + kind + ", e.g. [" + section +
                 (capture ? ".mic]" : ".speakers]"));
    }
    for (const auto& [k, body] : *table) {
        const std::string name(k.str());
        const toml::table* sink_table = body.as_table();
        if (sink_table == nullptr) {
            fail(src, line_of(body),
                 kind + " '" + name + "' must be a table ([" + section + "." + name + "])");
        }
        if (!is_valid_name(name)) {
            fail(src, line_of(body),
                 "invalid " + kind + " name '" + name +
                     "' (use letters, digits, '-', '_' and '.')");
        }
        if (capture && name.size() > 8 && name.ends_with(".monitor")) {
            fail(src, line_of(body), "a source name must not end in .monitor (sinks' monitors do)");
        }
        DeviceConfig sink;
        sink.name = name;
        sink.line = line_of(body);
        for (const auto& [option_key, value] : *sink_table) {
            const std::string key(option_key.str());
            if (key == "type") {
                if (!value.is_string()) {
                    fail(src, line_of(value),
                         "type of " + kind + " '" + name + "' must be a string");
                }
                sink.type = value.as_string()->get();
            } else {
                sink.options.emplace_back(key, option_text(value, key, src));
            }
        }
        if (sink.type.empty()) {
            fail(src, sink.line,
                 kind + " '" + name + "' has no type (e.g. type = \"" +
                     (capture ? "alsa" : "null") + "\")");
        }
        (capture ? config.sources : config.sinks).push_back(std::move(sink));
    }
}

// A level as audioctl takes it (absolute: 50%, 0.5, -6dB), for a start value.
float read_level(const toml::node& value, const std::string& key, const std::string& src) {
    const std::string text = option_text(value, key, src);
    const auto level = parse_volume_level(text);
    if (const auto* error = std::get_if<std::string>(&level)) {
        fail(src, line_of(value), *error);
    }
    if (std::get<VolumeLevel>(level).mode != LevelMode::absolute) {
        fail(src, line_of(value),
             key + " '" + text + "' is a step; a stream starts at a level (50%, 0.5, -6dB)");
    }
    return static_cast<float>(std::get<VolumeLevel>(level).value);
}

// One entry of a group's `local`: "SINK", or { sink = "SINK", delay-ms = N,
// volume = LEVEL, mute = BOOL }.
GroupMember read_group_member(const toml::node& node, const std::string& group,
                              const std::string& src) {
    GroupMember member;
    if (const auto* name = node.as_string()) {
        member.sink = name->get();
        return member;
    }
    const toml::table* table = node.as_table();
    if (table == nullptr) {
        fail(src, line_of(node),
             "group '" + group +
                 "': each of local is a sink's name or { sink = \"NAME\", delay-ms = N }");
    }
    for (const auto& [k, value] : *table) {
        const std::string key(k.str());
        const toml::node& entry = value;
        if (key == "sink") {
            if (!entry.is_string()) {
                fail(src, line_of(entry), "sink must be a string");
            }
            member.sink = entry.as_string()->get();
        } else if (key == "delay-ms") {
            const ConfigKey& spec = config_key("groups.NAME", "local.delay-ms");
            member.delay_ms = read_uint(entry, key, spec.min, spec.max, src);
        } else if (key == "volume") {
            member.volume = read_level(entry, key, src);
        } else if (key == "mute") {
            if (!entry.is_boolean()) {
                fail(src, line_of(entry), "mute must be true or false");
            }
            member.muted = entry.as_boolean()->get();
        } else {
            fail(src, line_of(entry),
                 "unknown key '" + key + "' in a member of group '" + group +
                     "' (known: sink, delay-ms, volume, mute)");
        }
    }
    if (member.sink.empty()) {
        fail(src, line_of(node), "group '" + group + "': a member without sink = \"NAME\"");
    }
    return member;
}

// [groups.NAME] tables: an rtp sink each, and what makes it a group.
void read_groups_table(const toml::node& node, ServerConfig& config) {
    const std::string& src = config.source;
    const toml::table* table = node.as_table();
    if (table == nullptr) {
        fail(src, line_of(node), "[groups] must hold one table per group, e.g. [groups.house]");
    }
    for (const auto& [k, body] : *table) {
        const std::string name(k.str());
        const toml::table* group_table = body.as_table();
        if (group_table == nullptr) {
            fail(src, line_of(body),
                 "group '" + name + "' must be a table ([groups." + name + "])");
        }
        if (!is_valid_name(name)) {
            fail(src, line_of(body),
                 "invalid group name '" + name + "' (use letters, digits, '-', '_' and '.')");
        }
        GroupConfig group;
        group.name = name;
        group.line = line_of(body);
        DeviceConfig sink{name, "rtp", {}, group.line};
        for (const auto& [option_key, value] : *group_table) {
            const std::string key(option_key.str());
            const toml::node& entry = value;
            if (key == "type") {
                fail(src, line_of(entry),
                     "group '" + name +
                         "' is an rtp sink; it takes no type (its other keys are "
                         "the rtp sink's options)");
            } else if (key == "link-offset-ms") {
                const ConfigKey& spec = config_key("groups.NAME", key);
                group.link_offset_ms = read_uint(entry, key, spec.min, spec.max, src);
            } else if (key == "local") {
                if (const auto* array = entry.as_array()) {
                    for (const toml::node& member : *array) {
                        group.local.push_back(read_group_member(member, name, src));
                    }
                } else {
                    group.local.push_back(read_group_member(entry, name, src));
                }
            } else {
                sink.options.emplace_back(key, option_text(entry, key, src));
            }
        }
        // Rooms stay in step through silence, so that nothing is faded
        // when the music starts (a receiver that lost its sender
        // re-aligns, and fades in).
        if (std::none_of(sink.options.begin(), sink.options.end(),
                         [](const auto& option) { return option.first == "suppress-silence"; })) {
            sink.options.emplace_back("suppress-silence", "false");
        }
        config.sinks.push_back(std::move(sink));
        config.groups.push_back(std::move(group));
    }
}

// A group's members are other sinks of this file, none a group (a group
// playing into another could feed itself), each once, each fed no earlier
// than the group sends.
void check_groups(const ServerConfig& config) {
    const std::string& src = config.source;
    const auto is_group = [&](const std::string& name) {
        return std::any_of(config.groups.begin(), config.groups.end(),
                           [&](const GroupConfig& g) { return g.name == name; });
    };
    for (const GroupConfig& group : config.groups) {
        std::vector<std::string> seen;
        for (const GroupMember& member : group.local) {
            const std::string what = "group '" + group.name + "': local sink '" + member.sink + "'";
            if (std::none_of(config.sinks.begin(), config.sinks.end(),
                             [&](const DeviceConfig& s) { return s.name == member.sink; })) {
                fail(src, group.line, what + " is not a configured sink");
            }
            if (is_group(member.sink)) {
                fail(src, group.line, what + " is a group; a group's members are plain sinks");
            }
            if (std::find(seen.begin(), seen.end(), member.sink) != seen.end()) {
                fail(src, group.line, what + " is listed twice");
            }
            seen.push_back(member.sink);
            if (member.delay_ms + GroupConfig::kMinReplayMs > group.link_offset_ms) {
                fail(src, group.line,
                     what + ": delay-ms = " + std::to_string(member.delay_ms) +
                         " leaves less than " + std::to_string(GroupConfig::kMinReplayMs) +
                         " ms of the link offset (" + std::to_string(group.link_offset_ms) +
                         " ms) to play it in step");
            }
        }
    }
}

// "PORT" or "HOST:PORT" ("[ADDRESS]:PORT" for IPv6), the port 1 to 65535.
bool valid_tcp_listener(const std::string& where) {
    const size_t colon = where.rfind(':');
    const std::string port = colon == std::string::npos ? where : where.substr(colon + 1);
    if (port.empty() || port.size() > 5 ||
        port.find_first_not_of("0123456789") != std::string::npos) {
        return false;
    }
    const long number = std::stol(port);
    return number >= 1 && number <= 65535 && (colon == std::string::npos || colon > 0);
}

// The [pulse] table.
void read_pulse_table(const toml::node& node, ServerConfig& config) {
    const std::string& src = config.source;
    const toml::table* table = node.as_table();
    if (table == nullptr) {
        fail(src, line_of(node), "[pulse] must be a table");
    }
    for (const auto& [k, value] : *table) {
        const std::string key(k.str());
        if (key == "enable") {
            if (!value.is_boolean()) {
                fail(src, line_of(value), "enable must be true or false");
            }
            config.pulse.enable = value.as_boolean()->get();
        } else if (key == "socket") {
            if (!value.is_string() || value.as_string()->get().empty() ||
                value.as_string()->get().front() != '/') {
                fail(src, line_of(value), "socket must be an absolute path");
            }
            config.pulse.socket = value.as_string()->get();
        } else if (key == "shared-memory") {
            if (!value.is_boolean()) {
                fail(src, line_of(value), "shared-memory must be true or false");
            }
            config.pulse.shared_memory = value.as_boolean()->get();
        } else if (key == "tcp") {
            if (!value.is_string() || !valid_tcp_listener(value.as_string()->get())) {
                fail(src, line_of(value),
                     "tcp must be \"PORT\" (on 127.0.0.1) or \"HOST:PORT\", a port from 1 to "
                     "65535");
            }
            config.pulse.tcp = value.as_string()->get();
        } else if (key == "cookie") {
            if (!value.is_string() || value.as_string()->get().empty() ||
                value.as_string()->get().front() != '/') {
                fail(src, line_of(value), "cookie must be an absolute path");
            }
            config.pulse.cookie = value.as_string()->get();
        } else {
            fail(src, line_of(value),
                 "unknown key '" + key + "' in [pulse] (known: " + known_keys("pulse") + ")");
        }
    }
}

// [apps.NAME] tables.
void read_apps_table(const toml::node& node, ServerConfig& config) {
    const std::string& src = config.source;
    const toml::table* table = node.as_table();
    if (table == nullptr) {
        fail(src, line_of(node), "[apps] must hold one table per application, e.g. [apps.mpv]");
    }
    for (const auto& [k, body] : *table) {
        const std::string name(k.str());
        const toml::table* app_table = body.as_table();
        if (app_table == nullptr) {
            fail(src, line_of(body),
                 "application '" + name + "' must be a table ([apps." + name + "])");
        }
        if (!is_valid_app_name(name)) {
            fail(src, line_of(body),
                 "invalid application name '" + name + "' (1 to 64 bytes, no control characters)");
        }
        AppRule rule;
        rule.app = name;
        rule.line = line_of(body);
        for (const auto& [option_key, value] : *app_table) {
            const std::string key(option_key.str());
            if (key == "volume") {
                rule.volume = read_level(value, key, src);
            } else if (key == "mute") {
                if (!value.is_boolean()) {
                    fail(src, line_of(value), "mute must be true or false");
                }
                rule.muted = value.as_boolean()->get();
            } else if (key == "sink") {
                if (!value.is_string()) {
                    fail(src, line_of(value), "sink must be a string");
                }
                rule.sink = value.as_string()->get();
            } else {
                fail(src, line_of(value),
                     "unknown key '" + key + "' in [apps." + name +
                         "] (known: volume, mute, sink)");
            }
        }
        config.apps.push_back(std::move(rule));
    }
}

ServerConfig parse_or_throw(std::string_view text, const std::string& source) {
    ServerConfig config;
    config.source = source;
    if (const auto unsafe = check_toml_text(text)) {
        fail(source, unsafe->line, "syntax error: " + unsafe->reason);
    }
    toml::table root;
    try {
        root = toml::parse(text, std::string_view(source));
    } catch (const toml::parse_error& e) {
        fail(source, e.source().begin.line, "syntax error: " + std::string(e.description()));
    }
    DefaultLines lines{1, 1};
    for (const auto& [k, value] : root) {
        const std::string key(k.str());
        if (key == "server") {
            const DefaultLines set = read_server_table(value, config);
            lines.sink = set.sink != 0 ? set.sink : lines.sink;
            lines.source = set.source != 0 ? set.source : lines.source;
        } else if (key == "sinks" || key == "sources") {
            read_sinks_table(value, config, key == "sources");
        } else if (key == "groups") {
            read_groups_table(value, config);
        } else if (key == "apps") {
            read_apps_table(value, config);
        } else if (key == "pulse") {
            read_pulse_table(value, config);
        } else {
            fail(source, line_of(value),
                 "unknown section '" + key +
                     "' (known: [server], [sinks.NAME], [sources.NAME], [groups.NAME], "
                     "[apps.NAME], [pulse])");
        }
    }
    // Tables come back sorted by name; present sinks in file order so that
    // "the first sink" means what the user sees.
    const auto by_line = [](const DeviceConfig& a, const DeviceConfig& b) {
        return a.line < b.line;
    };
    std::stable_sort(config.sinks.begin(), config.sinks.end(), by_line);
    std::stable_sort(config.sources.begin(), config.sources.end(), by_line);
    for (size_t i = 0; i < config.sinks.size(); ++i) {
        for (size_t j = i + 1; j < config.sinks.size(); ++j) {
            if (config.sinks[i].name == config.sinks[j].name) {
                fail(source, config.sinks[j].line,
                     "'" + config.sinks[j].name + "' is both a sink and a group");
            }
        }
    }
    check_groups(config);
    for (const DeviceConfig& source_config : config.sources) {
        if (std::any_of(config.sinks.begin(), config.sinks.end(),
                        [&](const DeviceConfig& s) { return s.name == source_config.name; })) {
            fail(source, source_config.line,
                 "source '" + source_config.name + "' has the name of a sink");
        }
    }
    for (const AppRule& rule : config.apps) {
        if (!rule.sink.empty() &&
            std::none_of(config.sinks.begin(), config.sinks.end(),
                         [&](const DeviceConfig& s) { return s.name == rule.sink; })) {
            fail(source, rule.line,
                 "application '" + rule.app + "' names sink '" + rule.sink +
                     "', which is not a configured sink");
        }
    }
    if (config.sinks.empty()) {
        fail(source, 1, "no sinks configured (add e.g. [sinks.default] with type = \"null\")");
    }
    if (config.sinks.size() + config.sources.size() > kMaxDevices) {
        fail(source, 1,
             std::to_string(config.sinks.size() + config.sources.size()) +
                 " sinks and sources configured; at most " + std::to_string(kMaxDevices));
    }
    if (config.default_sink.empty()) {
        config.default_sink = config.sinks.front().name;
    } else if (std::none_of(config.sinks.begin(), config.sinks.end(),
                            [&](const DeviceConfig& s) { return s.name == config.default_sink; })) {
        fail(source, lines.sink,
             "default-sink '" + config.default_sink + "' is not a configured sink");
    }
    const auto configured = [](const std::vector<DeviceConfig>& devices, const std::string& name) {
        return std::any_of(devices.begin(), devices.end(),
                           [&](const DeviceConfig& d) { return d.name == name; });
    };
    const std::string_view monitor = ".monitor";
    const std::string& chosen = config.default_source;
    if (!chosen.empty() && !configured(config.sources, chosen) &&
        !(chosen.ends_with(monitor) &&
          configured(config.sinks, chosen.substr(0, chosen.size() - monitor.size())))) {
        fail(source, lines.source,
             "default-source '" + chosen +
                 "' is neither a configured source nor a configured sink's monitor (SINK.monitor)");
    }
    return config;
}

} // namespace

std::variant<ServerConfig, std::string> parse_config(std::string_view text,
                                                     const std::string& source) {
    try {
        return parse_or_throw(text, source);
    } catch (const ConfigError& e) {
        return e.message;
    } catch (const std::exception& e) {
        return source + ":1: " + e.what();
    }
}

std::variant<ServerConfig, std::string> load_config(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    if (!in) {
        return path + ": cannot open the file";
    }
    std::ostringstream text;
    text << in.rdbuf();
    if (in.bad()) {
        return path + ": cannot read the file";
    }
    return parse_config(text.str(), path);
}

ServerConfig builtin_config() {
    ServerConfig config;
    config.source = "built-in defaults";
    config.default_sink = "default";
    config.sinks.push_back({"default", "auto", {}, 0});
    return config;
}

std::string find_config_file(bool system_wide) {
    std::string user;
    if (system_wide) {
        user = kSystemConfigPath;
    } else if (const char* xdg = std::getenv("XDG_CONFIG_HOME"); xdg != nullptr && *xdg != '\0') {
        user = std::string(xdg) + "/audiod/audiod.conf";
    } else if (const char* home = std::getenv("HOME"); home != nullptr && *home != '\0') {
        user = std::string(home) + "/.config/audiod/audiod.conf";
    }
    if (!user.empty() && ::access(user.c_str(), R_OK) == 0) {
        return user;
    }
    const std::string installed = executable_directory() + "/../share/audiod/audiod.conf";
    if (::access(installed.c_str(), R_OK) != 0) {
        return {};
    }
    // Say /usr/share/audiod/audiod.conf rather than /usr/bin/../share/...
    char resolved[PATH_MAX];
    return ::realpath(installed.c_str(), resolved) != nullptr ? std::string(resolved) : installed;
}

} // namespace audiod
