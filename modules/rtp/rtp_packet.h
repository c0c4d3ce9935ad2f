// RTP packets (RFC 3550 §5.1): the fixed header audiod writes, and a parser
// that checks every length a packet claims before trusting it.
// Thread: any; neither function allocates.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>

namespace audiod::rtp {

inline constexpr size_t kHeaderSize = 12;
// Payload types 96-127 are dynamic (RFC 3551 §6); audiod uses 96 by default.
inline constexpr uint8_t kDefaultPayloadType = 96;

struct RtpHeader {
    bool marker = false;
    uint8_t payload_type = kDefaultPayloadType;
    uint16_t sequence = 0;
    uint32_t timestamp = 0;
    uint32_t ssrc = 0;
};

// Writes the 12-byte header (version 2, no padding, extension or CSRCs).
void write_header(const RtpHeader& header, uint8_t* out) noexcept;

// Why a datagram is not an RTP packet audiod accepts; each is counted.
enum class PacketError {
    none,
    too_short,     // shorter than the fixed header
    bad_version,   // not version 2 (RTCP on the RTP port lands here too)
    bad_length,    // CSRCs, extension or padding run past the datagram
    empty_payload, // a header and nothing to play
};

struct RtpPacket {
    RtpHeader header;
    std::span<const uint8_t> payload; // inside the datagram it was parsed from
};

// Parses a received datagram. CSRCs and a header extension are skipped,
// padding is removed; `packet` is set only when the result is `none`.
[[nodiscard]] PacketError parse_packet(std::span<const uint8_t> datagram,
                                       RtpPacket& packet) noexcept;

[[nodiscard]] const char* packet_error_name(PacketError error) noexcept;

// Big-endian helpers shared by RTP, RTCP and SAP.
inline void put_u16(uint8_t* out, uint16_t v) noexcept {
    out[0] = static_cast<uint8_t>(v >> 8);
    out[1] = static_cast<uint8_t>(v);
}
inline void put_u32(uint8_t* out, uint32_t v) noexcept {
    put_u16(out, static_cast<uint16_t>(v >> 16));
    put_u16(out + 2, static_cast<uint16_t>(v));
}
inline uint16_t get_u16(const uint8_t* in) noexcept {
    return static_cast<uint16_t>((in[0] << 8) | in[1]);
}
inline uint32_t get_u32(const uint8_t* in) noexcept {
    return (uint32_t{get_u16(in)} << 16) | get_u16(in + 2);
}

} // namespace audiod::rtp
