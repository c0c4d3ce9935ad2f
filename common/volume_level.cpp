#include "common/volume_level.h"

#include <charconv>
#include <cmath>
#include <cstdio>

namespace audiod {
namespace {

enum class Unit { none, percent, db };

bool is_space(char c) noexcept {
    return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

bool is_digit(char c) noexcept {
    return c >= '0' && c <= '9';
}

std::string_view trim(std::string_view text) noexcept {
    while (!text.empty() && is_space(text.front())) {
        text.remove_prefix(1);
    }
    while (!text.empty() && is_space(text.back())) {
        text.remove_suffix(1);
    }
    return text;
}

bool equals_ignoring_case(std::string_view text, std::string_view lower) noexcept {
    if (text.size() != lower.size()) {
        return false;
    }
    for (size_t i = 0; i < text.size(); ++i) {
        const char c =
            text[i] >= 'A' && text[i] <= 'Z' ? static_cast<char>(text[i] - 'A' + 'a') : text[i];
        if (c != lower[i]) {
            return false;
        }
    }
    return true;
}

// Length of the plain decimal at the start of `text` ("12", "0.5", ".5",
// "5."), or 0 if there is none. Written out rather than left to from_chars,
// which would also take exponents, "inf" and "nan".
size_t decimal_length(std::string_view text) noexcept {
    size_t i = 0;
    size_t digits = 0;
    for (; i < text.size() && is_digit(text[i]); ++i) {
        ++digits;
    }
    if (i < text.size() && text[i] == '.') {
        for (++i; i < text.size() && is_digit(text[i]); ++i) {
            ++digits;
        }
    }
    return digits > 0 ? i : 0;
}

std::string invalid(std::string_view text) {
    return "invalid volume '" + std::string(text) + "': use 50%, 0.5, -6dB, +5%, +3dB or -=3dB";
}

} // namespace

std::variant<VolumeLevel, std::string> parse_volume_level(std::string_view text) {
    std::string_view rest = trim(text);
    char sign = 0;
    // "+=" and "-=" always mean a step, whatever the unit.
    bool explicit_step = false;
    if (!rest.empty() && (rest.front() == '+' || rest.front() == '-')) {
        sign = rest.front();
        rest.remove_prefix(1);
        if (!rest.empty() && rest.front() == '=') {
            explicit_step = true;
            rest.remove_prefix(1);
        }
    }
    const bool is_inf = rest.size() >= 3 && equals_ignoring_case(rest.substr(0, 3), "inf");
    const size_t number_length = is_inf ? 3 : decimal_length(rest);
    if (number_length == 0) {
        return invalid(text);
    }
    const std::string_view number = rest.substr(0, number_length);
    const std::string_view unit_text = trim(rest.substr(number_length));
    Unit unit = Unit::none;
    if (unit_text == "%") {
        unit = Unit::percent;
    } else if (equals_ignoring_case(unit_text, "db")) {
        unit = Unit::db;
    } else if (!unit_text.empty()) {
        return invalid(text);
    }

    if (is_inf) {
        if (sign == '-' && unit == Unit::db && !explicit_step) {
            return VolumeLevel{LevelMode::absolute, 0.0};
        }
        return invalid(text);
    }
    double magnitude = 0.0;
    const auto [end, ec] = std::from_chars(number.data(), number.data() + number.size(), magnitude);
    if (ec != std::errc() || end != number.data() + number.size() || !std::isfinite(magnitude)) {
        return invalid(text);
    }

    if (unit == Unit::db) {
        if (sign == '+' || explicit_step) {
            return VolumeLevel{LevelMode::relative_db, sign == '-' ? -magnitude : magnitude};
        }
        // "-6dB" names a level, not a step: see the sign rule in the header.
        const double db = sign == '-' ? -magnitude : magnitude;
        const double linear = std::pow(10.0, db / 20.0);
        if (linear > kMaxVolumeLinear) {
            return "volume '" + std::string(text) + "' is above the maximum of +12 dB (400%)";
        }
        return VolumeLevel{LevelMode::absolute, linear};
    }
    const double linear = unit == Unit::percent ? magnitude / 100.0 : magnitude;
    if (sign == 0) {
        if (linear > kMaxVolumeLinear) {
            return "volume '" + std::string(text) + "' is above the maximum of 400% (4.0)";
        }
        return VolumeLevel{LevelMode::absolute, linear};
    }
    if (linear > kMaxVolumeLinear) {
        return "volume step '" + std::string(text) +
               "' is larger than the whole range (at most 400% or 4.0)";
    }
    return VolumeLevel{LevelMode::relative_linear, sign == '-' ? -linear : linear};
}

std::string format_volume(double linear) {
    if (!(linear > 0.0)) {
        return "0% (-inf dB)";
    }
    double db = std::round(20.0 * std::log10(linear) * 10.0) / 10.0;
    if (db == 0.0) {
        db = 0.0; // no "-0.0 dB"
    }
    char text[64];
    std::snprintf(text, sizeof text, "%.0f%% (%s%.1f dB)", linear * 100.0, db > 0.0 ? "+" : "", db);
    return text;
}

} // namespace audiod
