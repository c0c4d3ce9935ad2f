// Reading a sink's options (the extra keys of its [sinks.NAME] table), with
// unknown keys reported rather than ignored. Thread: control.
#pragma once

#include "audiod/module.h"

#include <cstdio>
#include <initializer_list>
#include <optional>
#include <string>
#include <string_view>

namespace audiod {

class SinkOptions {
public:
    explicit SinkOptions(const audiod_sink_config& config) noexcept
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
    const audiod_sink_config& config_;
};

// Writes a message into a module's error buffer.
inline void set_error(char* error, size_t size, const std::string& message) {
    if (error != nullptr && size > 0) {
        std::snprintf(error, size, "%s", message.c_str());
    }
}

} // namespace audiod
