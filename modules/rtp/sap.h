// SAP (RFC 2974): the announcements that let receivers find an RTP session
// without configuration. A sender repeats its SDP to a well-known group and
// port every few seconds and sends a deletion when it stops; PulseAudio's
// module-rtp-recv and PipeWire listen on 224.0.0.56:9875.
// Thread: control (write allocates); parse allocates nothing.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace audiod::rtp {

inline constexpr uint16_t kSapPort = 9875;
// The group PulseAudio and PipeWire use (their default sap_address).
inline constexpr const char* kSapGroupIpv4 = "224.0.0.56";
// RFC 2974 §3's link-local IPv6 SAP group.
inline constexpr const char* kSapGroupIpv6 = "ff02::2:7ffe";
inline constexpr int kSapIntervalSeconds = 5;

struct SapMessage {
    bool deletion = false;
    uint16_t hash = 0;               // the message id, constant per session version
    std::span<const uint8_t> origin; // 4 (IPv4) or 16 (IPv6) bytes
    std::string_view sdp;            // inside the datagram
};

// An announcement (or deletion) of `sdp`, from `origin` (4 or 16 bytes).
[[nodiscard]] std::vector<uint8_t> write_sap(bool deletion, uint16_t hash,
                                             std::span<const uint8_t> origin, std::string_view sdp);

// Reads an announcement. Encrypted or compressed ones, other payload types
// and malformed headers return nullopt with the reason.
[[nodiscard]] std::optional<SapMessage> parse_sap(std::span<const uint8_t> datagram,
                                                  const char*& error) noexcept;

} // namespace audiod::rtp
