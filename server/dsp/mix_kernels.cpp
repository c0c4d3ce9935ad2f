#include "dsp/mix_kernels.h"

#include <algorithm>
#include <cmath>

namespace audiod::mix {

namespace {

// Float samples come from clients and are hostile: a NaN or infinity would
// poison the shared bus and with it every other stream on the sink. Map NaN
// to silence and clamp to +-kMaxFloatSample (far above full scale, so
// legitimate overs still clip in the mix as they should). Written with
// comparisons that a NaN fails, so it vectorises and needs no isnan().
inline float sanitize(float s) noexcept {
    s = s < kMaxFloatSample ? s : (s == s ? kMaxFloatSample : 0.0f);
    return s > -kMaxFloatSample ? s : -kMaxFloatSample;
}

// Round to nearest, ties to even, for |x| < 2^22: adding and subtracting
// 1.5 * 2^23 leaves the float's fraction bits empty. Unlike lrint() this
// vectorises. (Without -ffast-math the compiler may not fold it away.)
inline float round_even(float x) noexcept {
    constexpr float kMagic = 12582912.0f;
    return (x + kMagic) - kMagic;
}

} // namespace

// Plain loops the compiler vectorises at -O2; a hand-written SIMD variant
// belongs here only when bench/mix shows it pays.

void accumulate_s16(float* bus, const int16_t* src, size_t samples, float gain) noexcept {
    const float scale = gain * kS16Scale;
    for (size_t i = 0; i < samples; ++i) {
        bus[i] += static_cast<float>(src[i]) * scale;
    }
}

void accumulate_f32(float* bus, const float* src, size_t samples, float gain) noexcept {
    for (size_t i = 0; i < samples; ++i) {
        bus[i] += sanitize(src[i]) * gain;
    }
}

void accumulate_s16_ramp(float* bus, const int16_t* src, size_t frames, unsigned channels,
                         float gain_start, float gain_step) noexcept {
    for (size_t f = 0; f < frames; ++f) {
        const float scale = (gain_start + static_cast<float>(f) * gain_step) * kS16Scale;
        for (unsigned c = 0; c < channels; ++c) {
            bus[f * channels + c] += static_cast<float>(src[f * channels + c]) * scale;
        }
    }
}

void accumulate_f32_ramp(float* bus, const float* src, size_t frames, unsigned channels,
                         float gain_start, float gain_step) noexcept {
    for (size_t f = 0; f < frames; ++f) {
        const float gain = gain_start + static_cast<float>(f) * gain_step;
        for (unsigned c = 0; c < channels; ++c) {
            bus[f * channels + c] += sanitize(src[f * channels + c]) * gain;
        }
    }
}

void scale(float* bus, size_t samples, float gain) noexcept {
    for (size_t i = 0; i < samples; ++i) {
        bus[i] *= gain;
    }
}

void scale_ramp(float* bus, size_t frames, unsigned channels, float gain_start,
                float gain_step) noexcept {
    for (size_t f = 0; f < frames; ++f) {
        const float gain = gain_start + static_cast<float>(f) * gain_step;
        for (unsigned c = 0; c < channels; ++c) {
            bus[f * channels + c] *= gain;
        }
    }
}

void bus_to_s16(int16_t* out, const float* bus, size_t samples) noexcept {
    for (size_t i = 0; i < samples; ++i) {
        float scaled = bus[i] * 32768.0f;
        scaled = scaled < 32767.0f ? scaled : 32767.0f;
        scaled = scaled > -32768.0f ? scaled : -32768.0f;
        out[i] = static_cast<int16_t>(static_cast<int32_t>(round_even(scaled)));
    }
}

void bus_to_s32(int32_t* out, const float* bus, size_t samples) noexcept {
    for (size_t i = 0; i < samples; ++i) {
        // 2147483647 is not representable in float; clamp in double.
        const double scaled =
            std::clamp(static_cast<double>(bus[i]) * 2147483648.0, -2147483648.0, 2147483647.0);
        out[i] = static_cast<int32_t>(std::lrint(scaled));
    }
}

void bus_to_f32(float* out, const float* bus, size_t samples) noexcept {
    for (size_t i = 0; i < samples; ++i) {
        out[i] = std::clamp(bus[i], -1.0f, 1.0f);
    }
}

} // namespace audiod::mix
