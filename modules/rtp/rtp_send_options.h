// The options of an RTP sink ([sinks.NAME] type = "rtp"), checked and with
// their defaults. Thread: control.
#pragma once

#include "audiod/module.h"
#include "payload.h"

#include <cstdint>
#include <optional>
#include <string>

namespace audiod::rtp {

// Defaults shared with PulseAudio's module-rtp-send and PipeWire's rtp-sink,
// so a receiver configured for either finds audiod without changes.
inline constexpr const char* kDefaultDestination = "224.0.0.56";
inline constexpr uint16_t kDefaultPort = 46000;
// Keeps a packet inside the smallest IPv6 MTU with room for tunnels.
inline constexpr uint32_t kDefaultMtu = 1280;

struct RtpSendOptions {
    std::string destination = kDefaultDestination;
    uint16_t port = kDefaultPort; // RTP; RTCP goes to port + 1
    Encoding encoding = Encoding::opus;
    uint8_t payload_type = 96;
    uint32_t packet_frames = 0; // ptime in frames
    double ptime_ms = 0;
    uint32_t bitrate = 0; // Opus, bits per second
    bool fec = false;
    uint32_t expected_loss = 10; // percent, tunes Opus FEC
    // Each packet is sent again with the next one, a ptime later.
    bool resend = false;
    int ttl = 1;
    uint32_t mtu = kDefaultMtu;
    std::string sdp_file;
    bool announce = false;
    // Where announcements go; empty: SAP's group for the session's family.
    std::string sap_address;
    std::string session_name;
    bool suppress_silence = true;
    // The RTP clock the stream claims: the sink's rate, or for Opus 48000.
    // A sink whose rate differs sends a clock that is off by the
    // difference (at most 1 %): a sender that runs fast or slow, for
    // testing receivers.
    uint32_t clock_rate = 0;
};

// Reads and checks the options for a sink of `config`'s rate and channels.
// On error returns nullopt with a message naming the option.
[[nodiscard]] std::optional<RtpSendOptions> parse_send_options(const audiod_device_config& config,
                                                               std::string& error);

} // namespace audiod::rtp
