#include "media_clock.h"

#include <cmath>

namespace audiod::rtp {

namespace {

constexpr int64_t kNsPerSecond = 1'000'000'000;
constexpr int64_t kWrap = int64_t{1} << 32;

// Samples since the epoch at `ns` (whole seconds apart, so that nothing
// overflows: 2^63 ns is 292 years, their samples far fewer).
double samples_at(int64_t ns, uint32_t rate) noexcept {
    const int64_t seconds = ns / kNsPerSecond;
    const int64_t rest = ns % kNsPerSecond;
    return static_cast<double>(seconds) * rate + static_cast<double>(rest) * rate / 1e9;
}

} // namespace

uint32_t media_clock_at(int64_t reference_ns, uint32_t rate, uint32_t offset) noexcept {
    const int64_t seconds = reference_ns / kNsPerSecond;
    const int64_t rest = reference_ns % kNsPerSecond;
    // Whole seconds exactly; the fraction rounded to the nearest sample.
    const int64_t samples =
        seconds * rate + static_cast<int64_t>(std::llround(static_cast<double>(rest) * rate / 1e9));
    return static_cast<uint32_t>(static_cast<uint64_t>(samples) + offset);
}

int64_t media_clock_time(uint32_t rtp, uint32_t rate, uint32_t offset, int64_t near_ns) noexcept {
    const auto counted = static_cast<int64_t>(static_cast<uint32_t>(rtp - offset));
    const double near = samples_at(near_ns, rate);
    const auto wraps = static_cast<int64_t>(
        std::llround((near - static_cast<double>(counted)) / static_cast<double>(kWrap)));
    const int64_t samples = counted + wraps * kWrap;
    const int64_t seconds = samples / rate;
    const int64_t rest = samples % rate;
    return seconds * kNsPerSecond +
           static_cast<int64_t>(std::llround(static_cast<double>(rest) * 1e9 / rate));
}

} // namespace audiod::rtp
