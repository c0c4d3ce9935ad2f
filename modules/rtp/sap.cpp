#include "sap.h"

#include <cstring>

namespace audiod::rtp {

namespace {

constexpr std::string_view kSdpType = "application/sdp";

} // namespace

std::vector<uint8_t> write_sap(bool deletion, uint16_t hash, std::span<const uint8_t> origin,
                               std::string_view sdp) {
    const bool ipv6 = origin.size() == 16;
    std::vector<uint8_t> out;
    out.reserve(4 + origin.size() + kSdpType.size() + 1 + sdp.size());
    out.push_back(static_cast<uint8_t>(0x20 | (ipv6 ? 0x10 : 0) | (deletion ? 0x04 : 0)));
    out.push_back(0); // no authentication data
    out.push_back(static_cast<uint8_t>(hash >> 8));
    out.push_back(static_cast<uint8_t>(hash));
    out.insert(out.end(), origin.begin(), origin.end());
    out.insert(out.end(), kSdpType.begin(), kSdpType.end());
    out.push_back(0);
    out.insert(out.end(), sdp.begin(), sdp.end());
    return out;
}

std::optional<SapMessage> parse_sap(std::span<const uint8_t> datagram,
                                    const char*& error) noexcept {
    if (datagram.size() < 4) {
        error = "shorter than a SAP header";
        return std::nullopt;
    }
    const uint8_t flags = datagram[0];
    if ((flags >> 5) != 1) {
        error = "not SAP version 1";
        return std::nullopt;
    }
    if ((flags & 0x03) != 0) {
        error = "encrypted or compressed";
        return std::nullopt;
    }
    SapMessage message;
    message.deletion = (flags & 0x04) != 0;
    message.hash = static_cast<uint16_t>((datagram[2] << 8) | datagram[3]);
    const size_t origin_size = (flags & 0x10) != 0 ? 16 : 4;
    const size_t auth_size = size_t{datagram[1]} * 4;
    if (datagram.size() < 4 + origin_size + auth_size) {
        error = "origin or authentication data past the packet";
        return std::nullopt;
    }
    message.origin = datagram.subspan(4, origin_size);
    auto rest = datagram.subspan(4 + origin_size + auth_size);
    const auto* text = reinterpret_cast<const char*>(rest.data());
    // The payload type is optional: a payload that starts "v=0" is SDP.
    if (!(rest.size() >= 3 && std::memcmp(text, "v=0", 3) == 0)) {
        const void* nul = std::memchr(text, 0, rest.size());
        if (nul == nullptr) {
            error = "payload type not terminated";
            return std::nullopt;
        }
        const size_t type_size = static_cast<size_t>(static_cast<const char*>(nul) - text);
        if (std::string_view(text, type_size) != kSdpType) {
            error = "payload is not application/sdp";
            return std::nullopt;
        }
        rest = rest.subspan(type_size + 1);
        text = reinterpret_cast<const char*>(rest.data());
    }
    message.sdp = std::string_view(text, rest.size());
    // Some senders end the SDP with a NUL.
    while (!message.sdp.empty() && message.sdp.back() == '\0') {
        message.sdp.remove_suffix(1);
    }
    return message;
}

} // namespace audiod::rtp
