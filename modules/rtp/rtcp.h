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

// Room for any RTCP packet audiod writes (the CNAME is at most 255 bytes):
// a receiver's report with its SDES and playout (APP) is the largest.
inline constexpr size_t kMaxRtcpSize = 32 + 12 + 256 + 4 + 28;

struct SenderReport {
    uint32_t ssrc = 0;
    uint64_t ntp_time = 0; // NTP format: seconds since 1900 << 32 | fraction
    uint32_t rtp_timestamp = 0;
    uint32_t packet_count = 0;
    uint32_t octet_count = 0;
};

// A receiver's report on one sender (RFC 3550 §6.4.2: one report block).
struct ReceiverReport {
    uint32_t ssrc = 0;        // the receiver's own
    uint32_t source_ssrc = 0; // the sender reported on
    uint8_t fraction_lost = 0;
    uint32_t cumulative_lost = 0; // 24 bits
    uint32_t highest_sequence = 0;
    uint32_t jitter = 0;       // in RTP time units
    uint32_t last_report = 0;  // middle 32 bits of the last SR's NTP time
    uint32_t report_delay = 0; // since then, in 1/65536 s
};

// How a receiver's room plays the stream (an APP packet, name "ADPL", of
// audiod's own; other senders ignore it): what its sender lists for each
// member of a group.
struct PlayoutReport {
    bool timed = false;
    uint8_t clock = 0;        // 0 none, 1 the sender's reports, 2 PTP (a direct media clock)
    double sync_error_us = 0; // + late
    uint32_t realigns = 0;
    uint16_t link_offset_ms = 0;
    uint16_t delay_ms = 0;
};

// What a sender asks of the rooms of its group (an APP packet, name
// "ADCT", of audiod's own, sent with each sender report): each room's
// volume, mute and delay trim, by the room's CNAME. It lists every room the
// sender controls, so a room it no longer names goes back to its own
// settings; a receiver takes its entry only from its current sender.
struct RoomControl {
    char name[64] = {}; // the room's CNAME (its member-name), NUL-terminated
    uint8_t name_size = 0;
    double volume = 1; // linear gain, 0 to 4
    bool muted = false;
    bool has_delay = false; // else the room's own delay-ms holds
    uint16_t delay_ms = 0;
};
inline constexpr size_t kMaxRoomControls = 8;
struct RoomControls {
    uint8_t count = 0;
    RoomControl rooms[kMaxRoomControls];
};
// Room for a sender's compound packet: SR, SDES and the controls.
inline constexpr size_t kMaxSenderRtcpSize =
    kMaxRtcpSize + 16 + kMaxRoomControls * (8 + sizeof(RoomControl::name));

// SR + SDES(CNAME). Returns the bytes written to `out` (kMaxRtcpSize is
// always enough); a CNAME longer than 255 bytes is cut.
size_t write_sender_report(const SenderReport& report, std::string_view cname,
                           uint8_t* out) noexcept;

// RR + SDES(CNAME) + APP(playout), the last only if `playout` is given.
size_t write_receiver_report(const ReceiverReport& report, std::string_view cname,
                             const PlayoutReport* playout, uint8_t* out) noexcept;

// APP(ADCT) from sender `ssrc` with `controls` (at most kMaxRoomControls;
// names cut to 63 bytes), to follow a sender report. Returns its bytes.
size_t write_room_controls(uint32_t ssrc, const RoomControls& controls, uint8_t* out) noexcept;
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
    // A receiver's: its report block on a sender, its CNAME (cut to 63
    // bytes), and its playout.
    bool has_receiver_report = false;
    ReceiverReport receiver;
    char cname[64] = {};
    uint8_t cname_size = 0;
    bool has_playout = false;
    PlayoutReport playout;
    // A sender's: what it asks of its rooms, and its SSRC.
    bool has_controls = false;
    uint32_t controls_ssrc = 0;
    RoomControls controls;
};

// Reads a compound RTCP packet. Returns false if any part of it is malformed
// (wrong version, a length past the datagram), which drops the whole packet.
[[nodiscard]] bool parse_rtcp(std::span<const uint8_t> datagram, RtcpSummary& summary) noexcept;

} // namespace audiod::rtp
