// What the pulse server says of itself and of the engine in its answers:
// names, versions, the default format and devices. Taken on the control
// thread (from the engine) and carried to the pulse thread by value.
#pragma once

#include "pulse/tagstruct.h"

#include <cstdint>
#include <string>

namespace audiod::pulse {

// The name and version libpulse clients are told. The name says
// "PulseAudio" (some applications look for it) and then what it is; the
// version is that of the PulseAudio whose protocol is spoken.
inline constexpr const char* kServerVersion = "16.1.0";
[[nodiscard]] std::string server_name();

struct EngineFacts {
    uint32_t rate = 48000;
    uint32_t channels = 2;
    std::string default_sink;   // "" if none is working
    std::string default_source; // the default sink's monitor, or ""
};

// audiod's standard channel order for `channels` (doc/formats.md), as
// PulseAudio's channel positions.
[[nodiscard]] ChannelMap standard_channel_map(uint32_t channels);

// GET_SERVER_INFO's answer, written for a client of `version`.
[[nodiscard]] TagWriter server_info(const EngineFacts& facts, uint32_t version, uint32_t cookie);

} // namespace audiod::pulse
