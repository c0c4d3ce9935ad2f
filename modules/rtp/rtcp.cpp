#include "rtcp.h"

#include "rtp_packet.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <ctime>

namespace audiod::rtp {

namespace {

constexpr uint8_t kSenderReport = 200;
constexpr uint8_t kReceiverReport = 201;
constexpr uint8_t kSourceDescription = 202;
constexpr uint8_t kBye = 203;
constexpr uint8_t kApplication = 204;
constexpr uint8_t kCname = 1;
// The APP packet of a room's playout: name, and its data's size.
constexpr char kPlayoutName[4] = {'A', 'D', 'P', 'L'};
constexpr size_t kPlayoutData = 16;

// The APP packet of a sender's controls of its rooms: name; each entry is
// a name size, flags (1 muted, 2 a delay), the delay, the volume in
// millionths and the name, padded to a word.
constexpr char kControlName[4] = {'A', 'D', 'C', 'T'};
constexpr uint8_t kControlMuted = 1;
constexpr uint8_t kControlDelay = 2;
constexpr double kMaxControlVolume = 4;

// Seconds from 1900 (NTP's epoch) to 1970 (Unix's).
constexpr uint64_t kNtpUnixOffset = 2'208'988'800;

void put_common(uint8_t* out, uint8_t count, uint8_t type, size_t bytes) noexcept {
    out[0] = static_cast<uint8_t>(0x80 | count);
    out[1] = type;
    put_u16(out + 2, static_cast<uint16_t>(bytes / 4 - 1)); // in words, minus one
}

// SDES with one CNAME item for `ssrc`, at `out`; returns its bytes.
size_t write_cname(uint32_t ssrc, std::string_view cname, uint8_t* out) noexcept {
    const size_t name_size = std::min<size_t>(cname.size(), 255);
    // SSRC, CNAME item (type, length, text), an END item, padded to words.
    const size_t items = 2 + name_size + 1;
    const size_t bytes = 4 + 4 + (items + 3) / 4 * 4;
    std::memset(out, 0, bytes);
    put_common(out, 1, kSourceDescription, bytes);
    put_u32(out + 4, ssrc);
    out[8] = kCname;
    out[9] = static_cast<uint8_t>(name_size);
    std::memcpy(out + 10, cname.data(), name_size);
    return bytes;
}

} // namespace

size_t write_receiver_report(const ReceiverReport& report, std::string_view cname,
                             const PlayoutReport* playout, uint8_t* out) noexcept {
    put_common(out, 1, kReceiverReport, 32);
    put_u32(out + 4, report.ssrc);
    put_u32(out + 8, report.source_ssrc);
    put_u32(out + 12, (uint32_t{report.fraction_lost} << 24) | (report.cumulative_lost & 0xffffff));
    put_u32(out + 16, report.highest_sequence);
    put_u32(out + 20, report.jitter);
    put_u32(out + 24, report.last_report);
    put_u32(out + 28, report.report_delay);
    size_t size = 32 + write_cname(report.ssrc, cname, out + 32);
    if (playout != nullptr) {
        uint8_t* app = out + size;
        put_common(app, 0, kApplication, 12 + kPlayoutData);
        put_u32(app + 4, report.ssrc);
        std::memcpy(app + 8, kPlayoutName, 4);
        const double tenths = std::clamp(playout->sync_error_us * 10, -2e9, 2e9);
        put_u32(app + 12, static_cast<uint32_t>(static_cast<int32_t>(tenths)));
        put_u32(app + 16, playout->realigns);
        app[20] = static_cast<uint8_t>((playout->timed ? 1 : 0) | (playout->clock & 3) << 1);
        app[21] = 0;
        put_u16(app + 22, playout->link_offset_ms);
        put_u16(app + 24, playout->delay_ms);
        put_u16(app + 26, 0);
        size += 12 + kPlayoutData;
    }
    return size;
}

size_t write_sender_report(const SenderReport& report, std::string_view cname,
                           uint8_t* out) noexcept {
    put_common(out, 0, kSenderReport, 28);
    put_u32(out + 4, report.ssrc);
    put_u32(out + 8, static_cast<uint32_t>(report.ntp_time >> 32));
    put_u32(out + 12, static_cast<uint32_t>(report.ntp_time));
    put_u32(out + 16, report.rtp_timestamp);
    put_u32(out + 20, report.packet_count);
    put_u32(out + 24, report.octet_count);

    return 28 + write_cname(report.ssrc, cname, out + 28);
}

size_t write_room_controls(uint32_t ssrc, const RoomControls& controls, uint8_t* out) noexcept {
    const size_t count = std::min<size_t>(controls.count, kMaxRoomControls);
    size_t size = 16; // header, SSRC, name, count and three reserved octets
    for (size_t i = 0; i < count; ++i) {
        const RoomControl& room = controls.rooms[i];
        const size_t name = std::min<size_t>(room.name_size, sizeof room.name - 1);
        uint8_t* entry = out + size;
        const size_t bytes = (8 + name + 3) / 4 * 4;
        std::memset(entry, 0, bytes);
        entry[0] = static_cast<uint8_t>(name);
        entry[1] = static_cast<uint8_t>((room.muted ? kControlMuted : 0) |
                                        (room.has_delay ? kControlDelay : 0));
        put_u16(entry + 2, room.delay_ms);
        put_u32(entry + 4, static_cast<uint32_t>(std::llround(
                               std::clamp(room.volume, 0.0, kMaxControlVolume) * 1e6)));
        std::memcpy(entry + 8, room.name, name);
        size += bytes;
    }
    put_common(out, 0, kApplication, size);
    put_u32(out + 4, ssrc);
    std::memcpy(out + 8, kControlName, 4);
    out[12] = static_cast<uint8_t>(count);
    out[13] = out[14] = out[15] = 0;
    return size;
}

size_t write_bye(uint32_t ssrc, uint8_t* out) noexcept {
    put_common(out, 1, kBye, 8);
    put_u32(out + 4, ssrc);
    return 8;
}

uint64_t ntp_now() noexcept {
    timespec now{};
    clock_gettime(CLOCK_REALTIME, &now);
    return ntp_from_unix_ns(int64_t{now.tv_sec} * 1'000'000'000 + now.tv_nsec);
}

uint64_t ntp_from_unix_ns(int64_t ns) noexcept {
    const auto seconds = static_cast<uint64_t>(ns / 1'000'000'000) + kNtpUnixOffset;
    const auto nanos = static_cast<uint64_t>(ns % 1'000'000'000);
    return (seconds << 32) | ((nanos << 32) / 1'000'000'000u);
}

int64_t unix_ns_from_ntp(uint64_t ntp) noexcept {
    const auto seconds = static_cast<int64_t>(ntp >> 32) - static_cast<int64_t>(kNtpUnixOffset);
    const uint64_t fraction = ntp & 0xffffffffu;
    // Rounded to the nearest ns, so that a time written and read back is the same.
    return seconds * 1'000'000'000 +
           static_cast<int64_t>((fraction * 1'000'000'000u + (uint64_t{1} << 31)) >> 32);
}

bool parse_rtcp(std::span<const uint8_t> datagram, RtcpSummary& summary) noexcept {
    summary = {};
    size_t at = 0;
    if (datagram.size() < 4) {
        return false;
    }
    while (at < datagram.size()) {
        if (datagram.size() - at < 4) {
            return false;
        }
        const uint8_t* p = datagram.data() + at;
        if ((p[0] >> 6) != 2) {
            return false;
        }
        const size_t bytes = (size_t{get_u16(p + 2)} + 1) * 4;
        if (bytes > datagram.size() - at) {
            return false;
        }
        if (p[1] == kSenderReport) {
            if (bytes < 28) {
                return false;
            }
            summary.has_report = true;
            summary.report.ssrc = get_u32(p + 4);
            summary.report.ntp_time = (uint64_t{get_u32(p + 8)} << 32) | get_u32(p + 12);
            summary.report.rtp_timestamp = get_u32(p + 16);
            summary.report.packet_count = get_u32(p + 20);
            summary.report.octet_count = get_u32(p + 24);
        } else if (p[1] == kBye) {
            summary.bye = true;
        } else if (p[1] == kReceiverReport && (p[0] & 0x1f) >= 1) {
            if (bytes < 32) {
                return false;
            }
            summary.has_receiver_report = true;
            ReceiverReport& r = summary.receiver;
            r.ssrc = get_u32(p + 4);
            r.source_ssrc = get_u32(p + 8);
            r.fraction_lost = p[12];
            r.cumulative_lost = get_u32(p + 12) & 0xffffff;
            r.highest_sequence = get_u32(p + 16);
            r.jitter = get_u32(p + 20);
            r.last_report = get_u32(p + 24);
            r.report_delay = get_u32(p + 28);
        } else if (p[1] == kSourceDescription && (p[0] & 0x1f) >= 1 && bytes >= 10 &&
                   p[8] == kCname) {
            // The first chunk's first item, if it is a CNAME that fits.
            const size_t size = std::min<size_t>(p[9], sizeof summary.cname - 1);
            if (10 + size <= bytes) {
                std::memcpy(summary.cname, p + 10, size);
                summary.cname[size] = '\0';
                summary.cname_size = static_cast<uint8_t>(size);
            }
        } else if (p[1] == kApplication && bytes >= 12 + kPlayoutData &&
                   std::memcmp(p + 8, kPlayoutName, 4) == 0) {
            summary.has_playout = true;
            PlayoutReport& play = summary.playout;
            play.sync_error_us = static_cast<int32_t>(get_u32(p + 12)) / 10.0;
            play.realigns = get_u32(p + 16);
            play.timed = (p[20] & 1) != 0;
            play.clock = static_cast<uint8_t>((p[20] >> 1) & 3);
            play.link_offset_ms = get_u16(p + 22);
            play.delay_ms = get_u16(p + 24);
        } else if (p[1] == kApplication && bytes >= 16 &&
                   std::memcmp(p + 8, kControlName, 4) == 0) {
            // Entries that do not fit the packet, or beyond the most kept,
            // are not read; what was read stands.
            RoomControls& controls = summary.controls;
            controls.count = 0;
            size_t entry = 16;
            for (size_t i = 0; i < p[12] && controls.count < kMaxRoomControls; ++i) {
                if (entry + 8 > bytes) {
                    break;
                }
                const size_t name = p[entry];
                const size_t entry_bytes = (8 + name + 3) / 4 * 4;
                if (name >= sizeof(RoomControl::name) || entry + entry_bytes > bytes) {
                    break;
                }
                RoomControl& room = controls.rooms[controls.count++];
                room = RoomControl{};
                room.name_size = static_cast<uint8_t>(name);
                std::memcpy(room.name, p + entry + 8, name);
                room.muted = (p[entry + 1] & kControlMuted) != 0;
                room.has_delay = (p[entry + 1] & kControlDelay) != 0;
                room.delay_ms = get_u16(p + entry + 2);
                room.volume = std::min(get_u32(p + entry + 4) / 1e6, kMaxControlVolume);
                entry += entry_bytes;
            }
            summary.has_controls = true;
            summary.controls_ssrc = get_u32(p + 4);
        }
        at += bytes;
    }
    return true;
}

} // namespace audiod::rtp
