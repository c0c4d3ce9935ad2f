// The arithmetic of mixing: client samples into a float32 bus, the bus back
// out to the sink's format. Thread: rt (all of them); none allocates, locks
// or branches on anything but sizes.
//
// Exactness. An s16 sample becomes x / 32768 (a power-of-two scale, exact in
// float), and the bus becomes s16 again by x * 32768, rounded to nearest and
// saturated; so one s16 stream at unity gain passes bit-exact, and so does
// the sum of a few s16 streams that does not clip (24-bit mantissa).
#pragma once

#include <cstddef>
#include <cstdint>

namespace audiod::mix {

inline constexpr float kS16Scale = 1.0f / 32768.0f;
inline constexpr float kS32Scale = 1.0f / 2147483648.0f;
// Float client samples are clamped to this (+18 dB) and NaN becomes 0.
inline constexpr float kMaxFloatSample = 8.0f;

// bus[i] += src[i] * gain, for `samples` interleaved samples. Float input
// is sanitised first (see kMaxFloatSample): it comes from clients.
void accumulate_s16(float* bus, const int16_t* src, size_t samples, float gain) noexcept;
void accumulate_f32(float* bus, const float* src, size_t samples, float gain) noexcept;

// The same with a gain that moves linearly, per frame: frame k gets
// gain_start + k * gain_step (all channels of a frame share one gain).
void accumulate_s16_ramp(float* bus, const int16_t* src, size_t frames, unsigned channels,
                         float gain_start, float gain_step) noexcept;
void accumulate_f32_ramp(float* bus, const float* src, size_t frames, unsigned channels,
                         float gain_start, float gain_step) noexcept;

// In-place gain over the bus (sink volume); ramped like the above.
void scale(float* bus, size_t samples, float gain) noexcept;
void scale_ramp(float* bus, size_t frames, unsigned channels, float gain_start,
                float gain_step) noexcept;

// Bus to output, rounding to nearest and saturating at full scale.
void bus_to_s16(int16_t* out, const float* bus, size_t samples) noexcept;
void bus_to_s32(int32_t* out, const float* bus, size_t samples) noexcept;
// Float output is clamped to [-1, 1] so a file or device never sees overs.
void bus_to_f32(float* out, const float* bus, size_t samples) noexcept;

} // namespace audiod::mix
