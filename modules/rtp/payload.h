// What an RTP packet's payload holds, and the packing of linear PCM
// (RFC 3551 §4.5.11, RFC 3190: big-endian signed samples, interleaved).
// Thread: any; nothing allocates.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>

namespace audiod::rtp {

enum class Encoding { opus, l16, l24 };

// The name in SDP's rtpmap ("OPUS", "L16", "L24"). Opus is written in upper
// case: encoding names are case-insensitive (RFC 4566 §6), and PulseAudio 16
// recognises only "OPUS/".
[[nodiscard]] const char* encoding_name(Encoding encoding) noexcept;
// "opus", "l16", "l24" in any case.
[[nodiscard]] std::optional<Encoding> parse_encoding(std::string_view name) noexcept;

// Bytes per sample of linear PCM (2 or 3); 0 for Opus.
[[nodiscard]] size_t pcm_sample_bytes(Encoding encoding) noexcept;

// Host-order 16-bit samples to L16, in place safe; `count` samples.
void pack_l16(const int16_t* in, size_t count, uint8_t* out) noexcept;
// 32-bit samples to L24: their top 24 bits (the server mixes to s32).
void pack_l24(const int32_t* in, size_t count, uint8_t* out) noexcept;
void unpack_l16(const uint8_t* in, size_t count, int16_t* out) noexcept;
// L24 to 32-bit samples, the low byte zero.
void unpack_l24(const uint8_t* in, size_t count, int32_t* out) noexcept;

} // namespace audiod::rtp
