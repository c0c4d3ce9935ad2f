// Every key the configuration file accepts outside a module's own options,
// with its type, default and range: the one table that the parser takes
// its ranges and "known:" lists from, that the engine takes the device
// format keys' ranges from, and that a test holds audiod.conf(5) to (with
// each module's own option table), so that the manual cannot drift.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>

namespace audiod {

struct ConfigKey {
    std::string_view table;    // "server", "sinks.NAME", "sources.NAME", "apps.NAME", "pulse"
    std::string_view key;      // as written in the file
    std::string_view type;     // "integer", "string", "boolean", "level"
    std::string_view fallback; // the default, as a sentence fragment
    int64_t min = 0;           // integers: the range
    int64_t max = 0;
};

[[nodiscard]] std::span<const ConfigKey> config_keys();

// The key of that table. A key the code asks for that the table lacks is
// our bug: it aborts.
[[nodiscard]] const ConfigKey& config_key(std::string_view table, std::string_view key);

// "rate, channels, ...": the keys of a table, for error messages.
[[nodiscard]] std::string known_keys(std::string_view table);

} // namespace audiod
