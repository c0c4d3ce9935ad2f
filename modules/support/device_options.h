// Reading a device's options (the extra keys of its [sinks.NAME] or
// [sources.NAME] table), with unknown keys reported rather than ignored.
// Thread: control.
#pragma once

#include "audiod/module.h"

#include <algorithm>
#include <array>
#include <charconv>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <optional>
#include <span>
#include <string>
#include <string_view>

namespace audiod {

// A sink's or source's option table (audiod/module.h): the one list of the
// keys it accepts, which its `open` checks the configuration against and
// its ops table publishes.
using OptionSpecs = std::span<const audiod_option_spec>;

// Two tables as one, for a device that takes a shared set of options (the
// clock drift's) beside its own.
template <size_t A, size_t B>
constexpr std::array<audiod_option_spec, A + B>
join_options(const audiod_option_spec (&first)[A], const audiod_option_spec (&second)[B]) {
    std::array<audiod_option_spec, A + B> joined{};
    for (size_t i = 0; i < A; ++i) {
        joined[i] = first[i];
    }
    for (size_t i = 0; i < B; ++i) {
        joined[A + i] = second[i];
    }
    return joined;
}

// The table's keys in its order, "a, b, c" ("none" if it has none).
[[nodiscard]] std::string option_keys(OptionSpecs specs);

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

    // Why the options cannot open `device` ("the alsa sink"), if a key is
    // not in `specs`: "the alsa sink has no option 'colour' (known:
    // device, periods)", naming the first such key.
    [[nodiscard]] std::optional<std::string> check_keys(OptionSpecs specs,
                                                        std::string_view device) const;

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

// An open's refusal: the message into *error and the negative errno into
// *code; nullptr, for the open to return.
inline std::nullptr_t refuse(std::string* error, int* code, std::string message, int value) {
    *error = std::move(message);
    *code = value;
    return nullptr;
}

// Appends `more` to a describe() text of `size` bytes, `used` of them
// written; cut where it does not fit, NUL-terminated. Returns the new length.
inline size_t append_details(char* text, size_t size, size_t used, std::string_view more) {
    if (used + 1 >= size) {
        return used;
    }
    const size_t take = std::min(more.size(), size - used - 1);
    std::memcpy(text + used, more.data(), take);
    text[used + take] = '\0';
    return used + take;
}

// Writes a message into a module's error buffer.
inline void set_error(char* error, size_t size, const std::string& message) {
    if (error != nullptr && size > 0) {
        std::snprintf(error, size, "%s", message.c_str());
    }
}

} // namespace audiod
