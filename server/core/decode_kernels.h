// Client samples, in any client format and channel count, to float frames
// in the sink's channel count: the first stage for a stream that is not
// s16le or f32le at the sink's channel count (those are mixed directly by
// mix_kernels.h). Thread: rt; nothing allocates or locks.
//
// Scales: u8 (x - 128) / 128; s16 x / 2^15; s24 (either container) x / 2^23;
// s32 x / 2^31; all powers of two, so every integer sample converts exactly
// and goes back to its own format bit-exact. Float samples are sanitised
// (NaN to 0, clamped to +-8) since they come from clients. s24le takes the
// low 24 bits of each 32-bit container, sign-extended from bit 23 (the high
// byte is ignored, as ALSA does).
#pragma once

#include "channel_mix.h"
#include "sample_format.h"

#include <cstddef>
#include <cstdint>

namespace audiod::mix {

// Decodes `frames` frames of `format` with mix.in channels from `src` into
// `out` (frames * mix.out floats), applying the channel mix.
void decode_frames(SampleFormat format, const uint8_t* src, size_t frames, const ChannelMix& mix,
                   float* out) noexcept;

} // namespace audiod::mix
