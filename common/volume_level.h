// Volume levels as users type them on a command line ("50%", "-6dB", "+5%").
//
// Accepted forms (surrounding whitespace is ignored, and spaces may separate
// the number from its unit):
//   absolute   50%   0.5   1   0dB   3dB   -6dB   -inf dB
//   relative   +5%   -5%   +0.1   -0.1   +3dB   -=3dB   +=3dB   -=5%
// The unit "dB" is matched case-insensitively ("db", "DB"). Numbers are plain
// decimals: digits with an optional fraction; no exponents, hex, inf or nan
// (except the literal "-inf dB", which means silence).
//
// The sign rule. A leading '+' always means a step up, and a leading '-' on
// a percentage or a plain number a step down. But "-NdB" is ABSOLUTE: a level
// N dB below unity, as in "set it to -6 dB", which is how levels are usually
// spoken of. A step down in dB is written "-=3dB"; "+=" and "-=" make any
// form an explicit step.
//
// Absolute levels must lie in [0, 4.0] linear (0% to 400%, up to +12 dB);
// anything above is an error, never silently clamped. A linear step may not
// exceed 4.0 either, which catches "+50" typed for "+50%". Clamping the
// result of a relative step is the caller's business.
#pragma once

#include <string>
#include <string_view>
#include <variant>

namespace audiod {

// The loudest absolute level: 400%, about +12.04 dB.
inline constexpr double kMaxVolumeLinear = 4.0;

enum class LevelMode {
    absolute,        // value: the linear gain (1.0 unity, 0.0 silence)
    relative_linear, // value: added to the current linear gain ("+5%" is +0.05)
    relative_db,     // value: dB added to the current level
};

struct VolumeLevel {
    LevelMode mode = LevelMode::absolute;
    double value = 0.0;
};

// Parses one level; the error says what is accepted, e.g.
// "invalid volume '12x': use 50%, 0.5, -6dB, +5%, +3dB or -=3dB". Never throws on
// bad input.
[[nodiscard]] std::variant<VolumeLevel, std::string> parse_volume_level(std::string_view text);

// A linear gain for people: "50% (-6.0 dB)", "141% (+3.0 dB)", "0% (-inf dB)".
// The percentage is rounded to a whole number, the dB to one decimal. Zero,
// negative values and NaN print as "0% (-inf dB)".
[[nodiscard]] std::string format_volume(double linear);

} // namespace audiod
