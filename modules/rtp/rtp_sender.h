// The sending half of an RTP sink: cuts the sink's mix into packets of
// `ptime`, encodes them (Opus) or packs them (L16/L24), and sends them with
// RTCP sender reports, never blocking.
//
// Design. Everything that can allocate, block or fail slowly — resolving
// the destination, opening sockets, creating the Opus encoder — happens in
// create() on the control thread. write_rt() then runs on the sink's rt
// thread: it copies into a preallocated packet buffer, encodes into another
// (libopus encodes without allocating), and sends with MSG_DONTWAIT. A
// network that cannot take a packet (full socket buffer, no route) costs
// that packet, counted in `dropped`; the sink's clock, and so every other
// sink, never waits for it. A destination that refuses (nothing listens on
// a unicast port) is counted in `refused` and still sent to: the refusal
// is the kernel's news of an earlier packet (send_rt, udp_endpoint.h).
//
// Resending (`resend`). A packet lost on its way is rebuilt by Opus's FEC
// from the next one, but two lost in a row are not, and libopus 1.3 takes
// hundreds of milliseconds to return to a clean tone after concealing them.
// With `resend`, each packet goes out a second time, unchanged, with the
// next one: a receiver then misses a packet only when both copies are lost,
// and drops the copy it does not need as a duplicate, which any RTP
// receiver must already expect from a network, so the stream stays
// standard (tested audiod to audiod). Twice the bandwidth;
// the copy trails by a ptime so that a short burst of loss does not take
// both.
//
// Silence. After a second of digital silence (nothing playing) the sender
// stops sending, as RTP allows (RFC 3551 §4.1); the RTP clock keeps
// counting, and the first packet with sound again has the marker bit set.
#pragma once

#include "monotonic_time.h"
#include "receiver_table.h"

#include "ptp_follower.h"
#include "rtcp.h"
#include "rtp_packet.h"
#include "rtp_send_options.h"
#include "udp_endpoint.h"

#include "common/seq_locked.h"

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

struct OpusEncoder;

namespace audiod::rtp {

struct SenderStats {
    uint64_t packets = 0;       // sent
    uint64_t octets = 0;        // payload bytes sent
    uint64_t dropped = 0;       // the network did not take them
    uint64_t refused = 0;       // ICMP refusals of earlier packets (ECONNREFUSED)
    uint64_t resent = 0;        // copies sent (`resend`)
    uint64_t encode_errors = 0; // Opus failed: the packet was not sent
    int last_error = 0;         // errno of the last drop or refusal
    bool silent = false;        // sending nothing while nothing plays
};

class RtpSender {
public:
    // Thread: control. Returns nullptr with a message on failure.
    static std::unique_ptr<RtpSender> create(const RtpSendOptions& options, uint32_t rate,
                                             uint32_t channels, const UdpEndpoint& to,
                                             std::string& error);
    ~RtpSender();
    RtpSender(const RtpSender&) = delete;
    RtpSender& operator=(const RtpSender&) = delete;

    // The AUDIOD_FORMAT_* write_rt takes: f32 for Opus, s16 for L16, s32
    // for L24.
    [[nodiscard]] int sample_format() const noexcept;
    // Frames from write_rt to the wire: a packet's worth plus the encoder's
    // look-ahead.
    [[nodiscard]] uint32_t latency_frames() const noexcept;
    [[nodiscard]] uint32_t ssrc() const noexcept { return ssrc_; }
    // The ptp4l the sender follows (option ptp4l), or nullptr. Thread: any.
    [[nodiscard]] const PtpFollower* ptp() const noexcept { return ptp_.get(); }

    // Takes `count` frames of the mix, the first of them due (CLOCK_MONOTONIC)
    // at `due_ns`: each sender report maps an RTP time to the wall-clock
    // time its frame was due, the timeline every receiver that plays in
    // sync plays on (with its link offset). Thread: rt; never allocates,
    // locks or blocks.
    void write_rt(const void* frames, uint32_t count, int64_t due_ns) noexcept;
    // Says goodbye (RTCP BYE). Thread: rt.
    void stop_rt() noexcept;

    // Thread: any.
    [[nodiscard]] SenderStats stats() const noexcept;
    // The receivers that report back (receiver_table.h), as "key=value" lines.
    // Thread: any.
    size_t describe_receivers(char* text, size_t size) const {
        return receivers_.describe(text, size, monotonic_ns());
    }

    // What the sender asks of one of its rooms (rtcp.h RoomControl, by the
    // room's CNAME), sent with each report from now on: the `fields` of
    // `room` (kRoomVolume | kRoomMute | kRoomDelay), the others as asked
    // before (or the room's own). "" or why not (kMaxRoomControls rooms at
    // most). Thread: control.
    static constexpr unsigned kRoomVolume = 1, kRoomMute = 2, kRoomDelay = 4;
    [[nodiscard]] std::string control_room(const RoomControl& room, unsigned fields);
    // The room goes back to its own settings (it is no longer named).
    // False if nothing was asked of it. Thread: control.
    bool release_room(std::string_view name);
    // "room-control.NAME=volume=0.8;mute=no;delay-ms=own" lines. Thread: any but rt.
    [[nodiscard]] std::string describe_controls() const;

private:
    RtpSender(const RtpSendOptions& options, uint32_t rate, uint32_t channels);
    void publish_controls(); // Thread: control, with controls_mutex_ held
    void send_packet_rt() noexcept;
    // AES67: keeps the RTP time on the reference clock (media_clock.h).
    void follow_media_clock_rt(int64_t due_ns) noexcept;
    // How far the reference clock is ahead of CLOCK_MONOTONIC now.
    [[nodiscard]] int64_t reference_minus_monotonic_ns() const noexcept;
    [[nodiscard]] size_t encode_rt(uint8_t* out, size_t room) noexcept;
    void resend_rt() noexcept;
    void send_report_rt() noexcept;
    // Reads what receivers sent back to the RTCP socket (without waiting).
    void poll_receivers_rt() noexcept;
    void count_drop_rt(int error) noexcept;
    void count_refusal_rt() noexcept;

    RtpSendOptions options_;
    std::unique_ptr<PtpFollower> ptp_; // option ptp4l
    uint32_t rate_;
    uint32_t channels_;
    size_t frame_bytes_;
    UdpEndpoint rtp_to_;
    UdpEndpoint rtcp_to_;
    UniqueFd rtp_fd_;
    UniqueFd rtcp_fd_;
    OpusEncoder* encoder_ = nullptr;
    uint32_t lookahead_ = 0;
    std::string cname_;

    // rt state
    std::vector<uint8_t> pending_; // one packet of frames in the sink's format
    uint32_t pending_frames_ = 0;
    std::vector<uint8_t> packet_; // header + payload, sized for the MTU
    std::vector<uint8_t> copy_;   // the last packet, to send again (`resend`)
    size_t copy_size_ = 0;        // 0: nothing to send again
    uint32_t ssrc_ = 0;
    uint16_t sequence_ = 0;
    uint32_t timestamp_ = 0;
    uint64_t silent_frames_ = 0;
    bool marker_ = true;          // the first packet starts a talkspurt
    bool on_media_clock_ = false; // AES67: timestamp_ set from the reference clock
    uint64_t frames_since_poll_ = 0;
    ReceiverTable receivers_;
    // What is asked of the rooms: kept here, published for the rt thread,
    // which sends its last whole copy with each report once anything was
    // asked (then an empty list too, so that rooms let go).
    mutable std::mutex controls_mutex_;
    std::vector<RoomControl> wanted_;
    SeqLocked<RoomControls> controls_;
    std::atomic<bool> controlling_{false};
    RoomControls rt_controls_; // the rt thread's copy
    uint64_t frames_since_report_ = 0;
    uint32_t reports_sent_ = 0; // counted up to the early ones
    // The RTP time of the frame the last write_rt began with, and when it was due.
    uint32_t cycle_timestamp_ = 0;
    int64_t cycle_due_ns_ = 0;

    std::atomic<uint64_t> packets_{0};
    std::atomic<uint64_t> octets_{0};
    std::atomic<uint64_t> dropped_{0};
    std::atomic<uint64_t> refused_{0};
    std::atomic<uint64_t> resent_{0};
    std::atomic<uint64_t> encode_errors_{0};
    std::atomic<int> last_error_{0};
    std::atomic<bool> silent_{false};
};

} // namespace audiod::rtp
