// The receiving half of an RTP source: a thread of the module's own takes
// packets off the socket, checks them, puts them back in order, decodes
// them (Opus, or unpacks L16/L24) and conceals the lost ones, into the
// playout buffer that the source's rt thread reads.
//
// Order and loss. Packets wait in a window of kWindow sequence numbers
// until the one before them is decoded. A missing packet is waited for
// while the reader is more than a guard (its next quantum, plus this
// thread's wake-up slack) behind the decoded audio; then it is concealed —
// with Opus's in-band FEC from the next packet when the session has FEC and
// that packet is here, else with Opus's packet-loss concealment; L16/L24
// repeat the previous packet fading out, and fade the next one in. A packet
// that arrives after it was concealed is late; one already decoded or
// waiting is a duplicate. Both are counted and dropped. A packet decoded
// when the reader has already passed its start (nothing else came first
// to conceal it: this thread, or the sender, was held up) is overdue: the
// reader played silence there, and the rest of it is played. A sender that
// was held up catches up and its packets are soon ahead again; if they are
// still wholly behind the reader after a latency's time, the path's delay
// has grown for good, and the reader is re-aligned — else it would play
// silence for as long as the sender sends.
//
// Sessions. The first packet starts a session (its SSRC, its timestamp as
// position 0). Another SSRC takes over only when the current sender has
// been silent for kTakeOverMs or said BYE (RTCP on port + 1); until then its
// packets are counted as foreign. A sender that stops is idle after
// kIdleMs; when it resumes, the reader is re-aligned to its new audio.
//
// Time. The sender's RTCP reports say when each RTP time was due on its
// wall clock; the map learnt from them (sender_clock.h) is published for
// the source's rt thread, which, when the source is timed
// (link-offset-ms), says when each frame it reads is to be heard.
//
// Hostile input. Every datagram is parsed with its lengths checked
// (rtp_packet.h), Opus packets are validated before decoding, and all
// memory is allocated when the source opens: nothing grows per packet.
// Thread: create and the destructor on control; run() on its own thread.
#pragma once

#include "common/seq_locked.h"
#include "playout_buffer.h"
#include "ptp_follower.h"
#include "rtcp.h"
#include "rtp_packet.h"
#include "rtp_receive_options.h"
#include "sender_clock.h"
#include "udp_endpoint.h"

#include <array>
#include <atomic>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <thread>
#include <vector>

struct OpusDecoder;

namespace audiod::rtp {

struct ReceiverStats {
    uint64_t received = 0;  // packets accepted into the session
    uint64_t lost = 0;      // concealed (never there in time)
    uint64_t recovered = 0; // of those, rebuilt from the next packet's FEC
    uint64_t late = 0;      // arrived after being concealed
    uint64_t overdue = 0;   // decoded after the reader passed its start
    uint64_t duplicate = 0;
    uint64_t malformed = 0;  // not RTP, lengths that lie, undecodable
    uint64_t wrong_type = 0; // another payload type
    uint64_t refused = 0;    // from a sender `allow` does not list
    uint64_t foreign = 0;    // another SSRC while a session is active
    uint64_t sessions = 0;   // SSRCs followed so far
    uint64_t resyncs = 0;    // times the reader was re-aligned within a session
    uint32_t ssrc = 0;
    bool idle = true;
    double jitter_ms = 0;  // RFC 3550 interarrival jitter
    double latency_ms = 0; // audio ready ahead of the reader (smoothed; 0 when idle)
    double drift_ppm = 0;  // the sender's clock against ours
    uint64_t reports = 0;  // RTCP sender reports taken from the current sender
    std::string sender;    // address:port of the current session
};

class RtpReceiver {
public:
    static constexpr uint32_t kWindow = 64;
    static constexpr int kIdleMs = 1000;
    static constexpr int kTakeOverMs = 300;

    // Opens the socket(s) and the decoder and starts the thread; the
    // source reads `buffer()` at `rate` with `channels`, `quantum` frames
    // a cycle. Returns nullptr with a message on failure. Thread: control.
    static std::unique_ptr<RtpReceiver> create(const RtpReceiveOptions& options, uint32_t rate,
                                               uint32_t quantum, std::string& error);
    ~RtpReceiver();
    RtpReceiver(const RtpReceiver&) = delete;
    RtpReceiver& operator=(const RtpReceiver&) = delete;

    [[nodiscard]] PlayoutBuffer& buffer() noexcept { return *buffer_; }
    // Thread: any.
    [[nodiscard]] ReceiverStats stats() const;
    [[nodiscard]] const UdpEndpoint& local() const noexcept { return local_; }
    // When the current sender means each playout-buffer position to be
    // heard, as far as its reports tell (invalid before the first). Thread: any.
    [[nodiscard]] SenderTimeline timeline() const noexcept { return timeline_.read(); }
    // How the room plays the stream, for the receiver's reports to its
    // sender (rtcp.h PlayoutReport). Thread: any.
    void set_playout(bool timed, double sync_error_us, uint64_t realigns) noexcept;
    // What the current sender asks of this room (rtcp.h RoomControl: an
    // entry named for its member-name), else its own settings: a gain
    // (0 when muted) and a delay (-1: the room's own delay-ms). Thread: any.
    [[nodiscard]] float sender_gain() const noexcept {
        return sender_muted_.load(std::memory_order_relaxed)
                   ? 0.0f
                   : sender_volume_.load(std::memory_order_relaxed);
    }
    [[nodiscard]] int32_t sender_delay_ms() const noexcept {
        return sender_delay_ms_.load(std::memory_order_relaxed);
    }
    [[nodiscard]] bool sender_controls() const noexcept {
        return sender_controls_.load(std::memory_order_relaxed);
    }
    // The room's delay trim in force: the sender's, where it asks one this
    // room can take, else its own. Thread: any.
    [[nodiscard]] uint32_t delay_ms() const noexcept;
    // The ptp4l this room follows (option ptp4l), or nullptr. Thread: any.
    [[nodiscard]] const PtpFollower* ptp() const noexcept { return ptp_.get(); }

private:
    struct Waiting {
        bool present = false;
        uint64_t seq = 0;
        int64_t position = 0;
        bool marker = false;
        uint16_t size = 0;
        std::array<uint8_t, 1500> data{};
    };

    explicit RtpReceiver(const RtpReceiveOptions& options)
        : options_(options)
        , sender_clock_(options.clock_rate) {}
    static constexpr int64_t kReportIntervalNs = 1'000'000'000;
    void run();
    void on_rtp(const uint8_t* data, size_t size, const sockaddr_storage& from);
    void on_rtcp(const uint8_t* data, size_t size, const sockaddr_storage& from);
    // Tells the sender, once a second, how it is received and played
    // (RFC 3550 receiver report, and audiod's playout report).
    void report_to_sender();
    // A sender report of the current session's sender.
    void take_report(const SenderReport& report);
    // With a direct media clock: a report made from a packet's RTP time.
    void read_media_clock(uint32_t timestamp);
    void begin_session(const RtpPacket& packet, const sockaddr_storage& from);
    [[nodiscard]] int32_t frames_of(std::span<const uint8_t> payload) const noexcept;
    void advance();
    void play(const Waiting& packet);
    void conceal();
    void put(int64_t position, uint32_t frames);
    [[nodiscard]] int64_t guard() const noexcept;
    [[nodiscard]] int wait_ms() const noexcept;

    RtpReceiveOptions options_;
    std::unique_ptr<PtpFollower> ptp_;
    UdpEndpoint local_;
    UniqueFd rtp_fd_;
    UniqueFd rtcp_fd_;
    UniqueFd stop_fd_;
    OpusDecoder* decoder_ = nullptr;
    std::unique_ptr<PlayoutBuffer> buffer_;
    uint32_t quantum_in_ = 0; // the reader's quantum, in the sender's frames
    std::thread thread_;

    // the thread's own
    std::vector<Waiting> window_{kWindow};
    std::vector<float> decoded_;  // one packet, decoded
    std::vector<float> previous_; // the last packet played (PCM concealment)
    uint32_t previous_frames_ = 0;
    bool fade_in_ = false;
    bool in_session_ = false;
    bool bye_ = false;
    uint32_t ssrc_ = 0;
    uint64_t next_seq_ = 0;    // the next to decode
    uint64_t highest_seq_ = 0; // the highest received
    uint16_t last_seq16_ = 0;
    uint32_t last_ts_ = 0;
    int64_t last_position_ = 0;
    int64_t decoded_end_ = 0; // audio complete below this position
    int64_t offset_ = 0;      // added to packets' positions (see play())
    uint32_t packet_frames_ = 0;
    // When packets began to come wholly behind the reader (0: they do not).
    int64_t behind_since_ns_ = 0;
    uint64_t decoded_history_ = 0; // bit i: seq next_seq_-1-i was decoded, not concealed
    double transit_ = 0;
    bool have_transit_ = false;
    SenderClock sender_clock_;
    SeqLocked<SenderTimeline> timeline_;
    std::optional<SenderReport> early_report_; // read before its session began
    // Reports to the sender: its RTCP address (where its reports came
    // from), what the last said and when it came, our SSRC and name, and
    // the session's counts at the last report.
    sockaddr_storage sender_rtcp_{};
    bool have_sender_rtcp_ = false;
    uint32_t last_report_ntp_ = 0;
    int64_t last_report_at_ns_ = 0;
    int64_t reported_at_ns_ = 0;
    uint32_t own_ssrc_ = 0;
    uint64_t base_seq_ = 0;
    uint64_t session_received_ = 0;
    uint64_t expected_prior_ = 0;
    uint64_t received_prior_ = 0;
    std::atomic<float> sender_volume_{1};
    std::atomic<bool> sender_muted_{false};
    std::atomic<int32_t> sender_delay_ms_{-1};
    std::atomic<bool> sender_controls_{false}; // the current sender asks something
    void take_controls(const RtcpSummary& summary);
    std::atomic<bool> play_known_{false};
    std::atomic<bool> play_timed_{false};
    std::atomic<double> play_error_us_{0};
    std::atomic<uint64_t> play_realigns_{0};
    bool direct_reported_ = false;  // a media-clock report made this session
    uint32_t direct_timestamp_ = 0; // from the RTP time of this packet

    std::atomic<uint64_t> received_{0}, lost_{0}, recovered_{0}, late_{0}, overdue_{0},
        duplicate_{0}, malformed_{0}, wrong_type_{0}, refused_{0}, foreign_{0}, sessions_{0},
        resyncs_{0}, reports_{0};
    std::atomic<uint32_t> current_ssrc_{0};
    std::atomic<int64_t> last_packet_ns_{0};
    std::atomic<double> jitter_{0};
    // The sender, for stats(); set once a session (neither thread is rt).
    mutable std::mutex sender_mutex_;
    std::string sender_;
};

} // namespace audiod::rtp
