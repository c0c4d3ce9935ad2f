#include "config.h"

#include "module_loader.h"

#include <algorithm>
#include <climits>
#include <cstdlib>
#include <fstream>
#include <limits>
#include <sstream>
#include <toml.hpp>
#include <unistd.h>

namespace audiod {

namespace {

// toml11 reports problems with exceptions; everything below converts them to
// "file:line: reason" at this one boundary.
struct ConfigError {
    std::string message;
};

unsigned line_of(const toml::value& value) {
    return value.location().line();
}

[[noreturn]] void fail(const std::string& source, unsigned line, const std::string& reason) {
    throw ConfigError{source + ":" + std::to_string(line) + ": " + reason};
}

std::string describe_type(const toml::value& value) {
    std::ostringstream out;
    out << value.type();
    return out.str();
}

uint32_t read_uint(const toml::value& value, const std::string& key, int64_t min, int64_t max,
                   const std::string& source) {
    if (!value.is_integer()) {
        fail(source, line_of(value), key + " must be an integer, not " + describe_type(value));
    }
    const int64_t n = value.as_integer();
    if (n < min || n > max) {
        fail(source, line_of(value),
             key + " = " + std::to_string(n) + " is out of range (" + std::to_string(min) + ".." +
                 std::to_string(max) + ")");
    }
    return static_cast<uint32_t>(n);
}

bool is_valid_name(const std::string& name) {
    if (name.empty() || name.size() > 64) {
        return false;
    }
    return std::all_of(name.begin(), name.end(), [](char c) {
        return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
               c == '-' || c == '_' || c == '.';
    });
}

std::string option_text(const toml::value& value, const std::string& key,
                        const std::string& source) {
    if (value.is_string()) {
        return value.as_string().str;
    }
    if (value.is_integer()) {
        return std::to_string(value.as_integer());
    }
    if (value.is_floating()) {
        std::ostringstream out;
        out << value.as_floating();
        return out.str();
    }
    if (value.is_boolean()) {
        return value.as_boolean() ? "true" : "false";
    }
    fail(source, line_of(value),
         "option " + key + " must be a string, number or boolean, not " + describe_type(value));
}

void read_server_table(const toml::value& table, ServerConfig& config) {
    const std::string& src = config.source;
    if (!table.is_table()) {
        fail(src, line_of(table), "[server] must be a table");
    }
    for (const auto& [key, value] : table.as_table()) {
        if (key == "rate") {
            config.rate = read_uint(value, key, 8000, 192000, src);
        } else if (key == "channels") {
            config.channels = read_uint(value, key, 1, 8, src);
        } else if (key == "quantum") {
            config.quantum = read_uint(value, key, 16, 8192, src);
        } else if (key == "rt-priority") {
            config.rt_priority = static_cast<int>(read_uint(value, key, 0, 99, src));
        } else if (key == "default-sink") {
            if (!value.is_string()) {
                fail(src, line_of(value), "default-sink must be a string");
            }
            config.default_sink = value.as_string().str;
        } else {
            fail(src, line_of(value),
                 "unknown key '" + key +
                     "' in [server] (known: rate, channels, quantum, default-sink, rt-priority)");
        }
    }
}

void read_sinks_table(const toml::value& table, ServerConfig& config) {
    const std::string& src = config.source;
    if (!table.is_table()) {
        fail(src, line_of(table), "[sinks] must hold one table per sink, e.g. [sinks.speakers]");
    }
    for (const auto& [name, body] : table.as_table()) {
        if (!body.is_table()) {
            fail(src, line_of(body), "sink '" + name + "' must be a table ([sinks." + name + "])");
        }
        if (!is_valid_name(name)) {
            fail(src, line_of(body),
                 "invalid sink name '" + name + "' (use letters, digits, '-', '_' and '.')");
        }
        SinkConfig sink;
        sink.name = name;
        sink.line = line_of(body);
        for (const auto& [key, value] : body.as_table()) {
            if (key == "type") {
                if (!value.is_string()) {
                    fail(src, line_of(value), "type of sink '" + name + "' must be a string");
                }
                sink.type = value.as_string().str;
            } else {
                sink.options.emplace_back(key, option_text(value, key, src));
            }
        }
        if (sink.type.empty()) {
            fail(src, sink.line, "sink '" + name + "' has no type (e.g. type = \"null\")");
        }
        config.sinks.push_back(std::move(sink));
    }
}

ServerConfig parse_or_throw(std::string_view text, const std::string& source) {
    ServerConfig config;
    config.source = source;
    std::istringstream stream{std::string(text)};
    toml::value root;
    try {
        root = toml::parse(stream, source);
    } catch (const toml::exception& e) {
        // toml11's what() is a multi-line report; keep its first line's
        // reason and the location it carries.
        std::string reason = e.what();
        if (const auto nl = reason.find('\n'); nl != std::string::npos) {
            reason.resize(nl);
        }
        if (reason.rfind("[error] ", 0) == 0) {
            reason.erase(0, 8);
        }
        fail(source, e.location().line(), "syntax error: " + reason);
    }
    for (const auto& [key, value] : root.as_table()) {
        if (key == "server") {
            read_server_table(value, config);
        } else if (key == "sinks") {
            read_sinks_table(value, config);
        } else {
            fail(source, line_of(value),
                 "unknown section '" + key + "' (known: [server], [sinks.NAME])");
        }
    }
    // toml11 keeps tables unordered; present sinks in file order so that
    // "the first sink" means what the user sees.
    std::stable_sort(config.sinks.begin(), config.sinks.end(),
                     [](const SinkConfig& a, const SinkConfig& b) { return a.line < b.line; });
    if (config.sinks.empty()) {
        fail(source, 1, "no sinks configured (add e.g. [sinks.default] with type = \"null\")");
    }
    if (config.default_sink.empty()) {
        config.default_sink = config.sinks.front().name;
    } else if (std::none_of(config.sinks.begin(), config.sinks.end(),
                            [&](const SinkConfig& s) { return s.name == config.default_sink; })) {
        const unsigned line = root.contains("server") && root.at("server").contains("default-sink")
                                  ? line_of(root.at("server").at("default-sink"))
                                  : 1;
        fail(source, line, "default-sink '" + config.default_sink + "' is not a configured sink");
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
        // Anything else toml11 throws (bad numbers, internal checks).
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

std::string find_config_file() {
    std::string user;
    if (const char* xdg = std::getenv("XDG_CONFIG_HOME"); xdg != nullptr && *xdg != '\0') {
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
