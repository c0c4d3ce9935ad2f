// Measuring a recorded sine tone of known frequency: its amplitude and its
// THD+N (everything that is not the tone — harmonics, noise, aliasing, a
// wrong frequency — relative to the tone). Used by the resampling tests and
// bench/resample. A least-squares fit of a*sin + b*cos + c at the frequency,
// so no FFT and no window: exact for any length.
#pragma once

#include <cstddef>

namespace audiod {

struct ToneMeasure {
    double amplitude = 0; // peak, in the samples' own scale
    double thd_n_db = 0;  // residual power over tone power, in dB
};

// `count` samples taken every `stride` elements from `samples` (one channel
// of interleaved audio), sampled at `rate`, of a tone at `frequency`.
[[nodiscard]] ToneMeasure measure_tone(const float* samples, size_t count, size_t stride,
                                       double frequency, double rate);

} // namespace audiod
