#include "tone.h"

#include <cmath>
#include <numbers>

namespace audiod {

ToneGenerator::ToneGenerator(double hz, double amplitude, uint32_t rate, uint32_t channels) noexcept
    : step_(2.0 * std::numbers::pi * hz / rate)
    , amplitude_(amplitude)
    , channels_(channels) {}

void ToneGenerator::fill_s16(int16_t* out, size_t frames) noexcept {
    for (size_t f = 0; f < frames; ++f) {
        const auto sample =
            static_cast<int16_t>(std::lrint(amplitude_ * std::sin(phase_) * 32767.0));
        for (uint32_t c = 0; c < channels_; ++c) {
            out[f * channels_ + c] = sample;
        }
        // Keep the phase small so precision does not decay over long tones.
        phase_ = std::fmod(phase_ + step_, 2.0 * std::numbers::pi);
    }
}

} // namespace audiod
