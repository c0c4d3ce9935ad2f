// A simulated crystal error for the sinks a timer paces (null, file): a
// sound card's clock never quite matches the system's, and two machines'
// clocks never match each other. On one machine every process shares one
// kernel clock, so the test rig that puts several rooms on one machine
// gives each room's sink an error of its own here: a constant offset in
// parts per million and a slow wander around it.
//
//   [sinks.room]
//   type = "file"
//   clock-ppm = -100            # 100 ppm slow
//   clock-wander-ppm = 5        # ±5 ppm on top, a sine ...
//   clock-wander-seconds = 120  # ... of this period
#pragma once

#include "audiod/module.h"
#include "device_options.h"

#include <string>
#include <variant>

namespace audiod {

struct ClockDrift {
    double ppm = 0;
    double wander_ppm = 0;
    double wander_seconds = 60;

    [[nodiscard]] bool none() const noexcept { return ppm == 0 && wander_ppm == 0; }
    // Frames the clock takes per nominal frame, `seconds` after it started:
    // 1 + (ppm + wander) · 10⁻⁶. Thread: any (rt included: no allocation).
    [[nodiscard]] double speed_at(double seconds) const noexcept;
};

// The options that set it, for the tables of the sinks that take them.
inline constexpr audiod_option_spec kClockDriftOptions[] = {
    {"clock-ppm", "number", "0", "-10000..10000",
     "the sink's clock error in parts per million (+ runs fast), to stand in for a card's "
     "crystal or another machine's clock"},
    {"clock-wander-ppm", "number", "0", "0..1000",
     "the amplitude of a slow sine the clock error wanders by"},
    {"clock-wander-seconds", "number", "60", "1..86400", "the period of that wander"},
};

// Reads the options above; a message naming the bad one otherwise.
[[nodiscard]] std::variant<ClockDrift, std::string> read_clock_drift(const DeviceOptions& options);

} // namespace audiod
