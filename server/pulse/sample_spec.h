// PulseAudio's sample specs in audiod's terms: which of its sample formats
// audiod plays (the little-endian integer and float ones, as libpulse
// clients on this machine send them), bytes per frame, and how a spec is
// described in a format info (v21) and checked. Thread: any.
#pragma once

#include "protocol/sample_format.h"
#include "pulse/tagstruct.h"

#include <cstdint>
#include <optional>
#include <string>

namespace audiod::pulse {

// audiod's format for a pulse sample format, or nullopt for one it does
// not play (big-endian, A-law, µ-law).
[[nodiscard]] std::optional<audiod::SampleFormat> audiod_format(uint8_t pulse_format) noexcept;
// The pulse sample format for one of audiod's.
[[nodiscard]] uint8_t pulse_format(audiod::SampleFormat format) noexcept;
// PulseAudio's name of a sample format ("s16le"), "" if unknown.
[[nodiscard]] std::string format_name(uint8_t pulse_format);

// Why `spec` cannot be played (a format audiod does not take, a rate or
// channel count out of range), or "" if it can.
[[nodiscard]] std::string unplayable(const SampleSpec& spec);
// Bytes per frame of a playable spec.
[[nodiscard]] uint32_t frame_bytes(const SampleSpec& spec) noexcept;

// A PCM format info (encoding 1) describing `spec` and `map`, as a reply
// to a v21 client carries it.
[[nodiscard]] FormatInfo pcm_format_info(const SampleSpec& spec, const ChannelMap& map);
// The sample spec a PCM format info names, or nullopt if it names none
// completely (a client of pa_stream_new_extended sends formats, and an
// invalid sample spec).
[[nodiscard]] std::optional<SampleSpec> spec_of(const FormatInfo& format);

} // namespace audiod::pulse
