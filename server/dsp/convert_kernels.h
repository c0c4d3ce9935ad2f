// Converting between client sample formats and float frames, for streams
// that are not mixed as they are (mix_kernels.h does those): decoding a
// playback stream's samples, with a channel mix, to the sink's channels;
// and for record streams, remixing the sink's float frames to the stream's
// channels and encoding them in its format. Thread: rt; nothing allocates
// or locks.
//
// Scales: u8 (x - 128) / 128; s16 x / 2^15; s24 (either container) x / 2^23;
// s32 x / 2^31; all powers of two, so every integer sample converts exactly
// and goes back to its own format bit-exact. Float samples are sanitised
// (NaN to 0, clamped to +-8) since they come from clients. s24le takes the
// low 24 bits of each 32-bit container, sign-extended from bit 23 (the high
// byte is ignored, as ALSA does).
#pragma once

#include "dsp/channel_mix.h"
#include "protocol/sample_format.h"

#include <cstddef>
#include <cstdint>

namespace audiod::mix {

// Decodes `frames` frames of `format` with mix.in channels from `src` into
// `out` (frames * mix.out floats), applying the channel mix.
void decode_frames(SampleFormat format, const uint8_t* src, size_t frames, const ChannelMix& mix,
                   float* out) noexcept;

// Float frames with mix.in channels to frames with mix.out channels.
void remix(const float* in, size_t frames, const ChannelMix& mix, float* out) noexcept;

// `samples` floats to `format`, rounding to nearest and saturating exactly
// as the sink's own output does (so s16, s32 and f32 recordings of a sink in
// that format equal what it played); u8 and s24 the same way at their width.
void encode_samples(SampleFormat format, const float* in, size_t samples, uint8_t* out) noexcept;

} // namespace audiod::mix
