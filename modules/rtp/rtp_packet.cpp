#include "rtp_packet.h"

namespace audiod::rtp {

void write_header(const RtpHeader& header, uint8_t* out) noexcept {
    out[0] = 0x80; // version 2
    out[1] = static_cast<uint8_t>((header.marker ? 0x80 : 0) | (header.payload_type & 0x7f));
    put_u16(out + 2, header.sequence);
    put_u32(out + 4, header.timestamp);
    put_u32(out + 8, header.ssrc);
}

PacketError parse_packet(std::span<const uint8_t> datagram, RtpPacket& packet) noexcept {
    if (datagram.size() < kHeaderSize) {
        return PacketError::too_short;
    }
    const uint8_t* p = datagram.data();
    if ((p[0] >> 6) != 2) {
        return PacketError::bad_version;
    }
    const bool padding = (p[0] & 0x20) != 0;
    const bool extension = (p[0] & 0x10) != 0;
    const size_t csrc_count = p[0] & 0x0f;
    size_t begin = kHeaderSize + 4 * csrc_count;
    size_t end = datagram.size();
    if (begin > end) {
        return PacketError::bad_length;
    }
    if (extension) {
        // 16-bit profile, 16-bit length in 32-bit words, then the words.
        if (begin + 4 > end) {
            return PacketError::bad_length;
        }
        begin += 4 + size_t{4} * get_u16(p + begin + 2);
        if (begin > end) {
            return PacketError::bad_length;
        }
    }
    if (padding) {
        // The last byte counts the padding bytes, itself included.
        const size_t pad = p[end - 1];
        if (pad == 0 || pad > end - begin) {
            return PacketError::bad_length;
        }
        end -= pad;
    }
    if (begin == end) {
        return PacketError::empty_payload;
    }
    // A payload type of 72-76 is an RTCP packet type with the marker bit set
    // (RFC 5761); such a packet is left to the payload-type check.
    packet.header.marker = (p[1] & 0x80) != 0;
    packet.header.payload_type = p[1] & 0x7f;
    packet.header.sequence = get_u16(p + 2);
    packet.header.timestamp = get_u32(p + 4);
    packet.header.ssrc = get_u32(p + 8);
    packet.payload = datagram.subspan(begin, end - begin);
    return PacketError::none;
}

const char* packet_error_name(PacketError error) noexcept {
    switch (error) {
    case PacketError::none:
        return "none";
    case PacketError::too_short:
        return "too short";
    case PacketError::bad_version:
        return "not RTP version 2";
    case PacketError::bad_length:
        return "lengths run past the packet";
    case PacketError::empty_payload:
        return "no payload";
    }
    return "unknown";
}

} // namespace audiod::rtp
