// Reading a device's options (the extra keys of its [sinks.NAME] or
// [sources.NAME] table), with unknown keys reported rather than ignored.
// Thread: control.
#pragma once

#include "audiod/module.h"

#include <charconv>
#include <cstdint>
#include <cstdio>
#include <initializer_list>
#include <optional>
#include <string>
#include <string_view>

namespace audiod {

class DeviceOptions {
public:
    explicit DeviceOptions(const audiod_device_config& config) noexcept
        : config_(config) {}

    [[nodiscard]] std::optional<std::string> get(std::string_view key) const {
        for (size_t i = 0; i < config_.option_count; ++i) {
            if (key == config_.options[i].key) {
                return std::string(config_.options[i].value);
            }
        }
        return std::nullopt;
    }

    // The first option whose key is not in `known`, if any.
    [[nodiscard]] std::optional<std::string>
    unknown_key(std::initializer_list<std::string_view> known) const {
        for (size_t i = 0; i < config_.option_count; ++i) {
            bool found = false;
            for (const auto k : known) {
                found = found || k == config_.options[i].key;
            }
            if (!found) {
                return std::string(config_.options[i].key);
            }
        }
        return std::nullopt;
    }

private:
    const audiod_device_config& config_;
};

// An option's value as an unsigned integer no larger than `max` (decimal,
// nothing else in the text).
inline bool parse_uint(const std::string& text, uint64_t max, uint64_t& value) {
    const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
    return ec == std::errc{} && end == text.data() + text.size() && value <= max;
}

// "true"/"yes"/"1" or "false"/"no"/"0".
inline bool parse_bool(const std::string& text, bool& value) {
    if (text == "true" || text == "yes" || text == "1") {
        value = true;
        return true;
    }
    if (text == "false" || text == "no" || text == "0") {
        value = false;
        return true;
    }
    return false;
}

// Writes a message into a module's error buffer.
inline void set_error(char* error, size_t size, const std::string& message) {
    if (error != nullptr && size > 0) {
        std::snprintf(error, size, "%s", message.c_str());
    }
}

} // namespace audiod
