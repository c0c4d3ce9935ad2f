// RTCP (RFC 3550 §6): the compound packets a sender writes — a sender report
// tying the RTP clock to wall-clock (NTP) time, with the CNAME that names the
// sender, and a BYE when it stops — and a parser that reads sender reports
// out of a received compound packet. Thread: any; nothing allocates.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>

namespace audiod::rtp {

// Room for any RTCP packet audiod writes (the CNAME is at most 255 bytes).
inline constexpr size_t kMaxRtcpSize = 28 + 12 + 256 + 4;

struct SenderReport {
    uint32_t ssrc = 0;
    uint64_t ntp_time = 0; // NTP format: seconds since 1900 << 32 | fraction
    uint32_t rtp_timestamp = 0;
    uint32_t packet_count = 0;
    uint32_t octet_count = 0;
};

// SR + SDES(CNAME). Returns the bytes written to `out` (kMaxRtcpSize is
// always enough); a CNAME longer than 255 bytes is cut.
size_t write_sender_report(const SenderReport& report, std::string_view cname,
                           uint8_t* out) noexcept;

// BYE for `ssrc` (RFC 3550 §6.6): the receiver may end the session now.
size_t write_bye(uint32_t ssrc, uint8_t* out) noexcept;

// The wall clock now, in NTP format.
[[nodiscard]] uint64_t ntp_now() noexcept;
// A CLOCK_REALTIME time (ns since 1970) in NTP format, and back.
[[nodiscard]] uint64_t ntp_from_unix_ns(int64_t ns) noexcept;
[[nodiscard]] int64_t unix_ns_from_ntp(uint64_t ntp) noexcept;

struct RtcpSummary {
    bool has_report = false;
    SenderReport report;
    bool bye = false;
};

// Reads a compound RTCP packet. Returns false if any part of it is malformed
// (wrong version, a length past the datagram), which drops the whole packet.
[[nodiscard]] bool parse_rtcp(std::span<const uint8_t> datagram, RtcpSummary& summary) noexcept;

} // namespace audiod::rtp
