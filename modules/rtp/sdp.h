// Session descriptions (RFC 4566) for one audio RTP stream: what audiod
// writes for its sinks (to a file, and inside SAP announcements) and what it
// accepts from other senders. Lines end in "\n" alone, as PulseAudio and
// PipeWire write them; the parser takes "\r\n" too.
// Thread: control (both allocate).
#pragma once

#include "payload.h"

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace audiod::rtp {

// Larger descriptions are refused unread (a SAP packet holds at most ~1 kB).
inline constexpr size_t kMaxSdpSize = 8192;

struct SdpDescription {
    std::string session_name;
    std::string origin_address; // the sender's address, for o=
    uint64_t session_id = 0;
    uint64_t session_version = 0;
    std::string address; // where the stream goes (c=): unicast or a group
    bool ipv6 = false;
    uint8_t ttl = 1; // written after an IPv4 multicast address
    uint16_t port = 0;
    uint8_t payload_type = 0;
    Encoding encoding = Encoding::opus;
    uint32_t rate = 0;     // the RTP clock: always 48000 for Opus
    uint32_t channels = 0; // for Opus, what sprop-stereo says (1 or 2)
    double ptime_ms = 0;   // 0: not stated
    bool fec = false;      // Opus in-band FEC (useinbandfec=1)
    // RFC 7273: the clock the RTP times come from (a=ts-refclk, e.g.
    // "ptp=IEEE1588-2008:39-A7-94-FF-FE-07-CB-D0:0"; "": not said) and
    // whether they count it directly (a=mediaclk:direct=OFFSET, AES67).
    std::string ts_refclk;
    std::optional<uint32_t> mediaclk_direct;
};

[[nodiscard]] std::string write_sdp(const SdpDescription& description);

// Parses a description of one audio stream that audiod can play: the first
// `m=audio` line's first payload type, which must be Opus, L16 or L24 (or
// the static L16 types 10 and 11). On failure, returns nullopt and says why.
[[nodiscard]] std::optional<SdpDescription> parse_sdp(std::string_view text, std::string& error);

} // namespace audiod::rtp
