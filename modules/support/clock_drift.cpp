#include "clock_drift.h"

#include <charconv>
#include <cmath>
#include <numbers>
#include <optional>

namespace audiod {

namespace {

std::optional<double> parse_number(const std::string& text) {
    double value = 0;
    const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
    if (ec != std::errc{} || end != text.data() + text.size() || !std::isfinite(value)) {
        return std::nullopt;
    }
    return value;
}

// Reads `key` into `value` if it is set; a message if it is not a number in [low, high].
std::optional<std::string> read_number(const DeviceOptions& options, const char* key, double low,
                                       double high, double& value) {
    const auto text = options.get(key);
    if (!text) {
        return std::nullopt;
    }
    const auto number = parse_number(*text);
    if (!number || *number < low || *number > high) {
        char range[64];
        std::snprintf(range, sizeof range, "%g to %g", low, high);
        return std::string(key) + " '" + *text + "' is not a number from " + range;
    }
    value = *number;
    return std::nullopt;
}

} // namespace

double ClockDrift::speed_at(double seconds) const noexcept {
    const double wander =
        wander_ppm == 0 ? 0
                        : wander_ppm * std::sin(2 * std::numbers::pi * seconds / wander_seconds);
    return 1 + (ppm + wander) * 1e-6;
}

std::variant<ClockDrift, std::string> read_clock_drift(const DeviceOptions& options) {
    ClockDrift drift;
    for (auto refusal :
         {read_number(options, "clock-ppm", -10000, 10000, drift.ppm),
          read_number(options, "clock-wander-ppm", 0, 1000, drift.wander_ppm),
          read_number(options, "clock-wander-seconds", 1, 86400, drift.wander_seconds)}) {
        if (refusal) {
            return std::move(*refusal);
        }
    }
    return drift;
}

} // namespace audiod
