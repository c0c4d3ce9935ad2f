// A sine generator for test tones (audioplay --tone, benchmarks).
#pragma once

#include <cstddef>
#include <cstdint>

namespace audiod {

class ToneGenerator {
public:
    // `amplitude` is linear full scale (0.25 = -12 dBFS); every channel
    // carries the same signal.
    ToneGenerator(double hz, double amplitude, uint32_t rate, uint32_t channels) noexcept;

    // Fills `frames` interleaved s16 frames and advances the phase.
    void fill_s16(int16_t* out, size_t frames) noexcept;

private:
    double phase_ = 0.0;
    double step_;
    double amplitude_;
    uint32_t channels_;
};

} // namespace audiod
