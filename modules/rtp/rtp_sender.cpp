#include "rtp_sender.h"

#include "audiod/audiod.h"
#include "media_clock.h"
#include "monotonic_time.h"

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <opus.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <unistd.h>

namespace audiod::rtp {

namespace {

// How often a sender report goes out: a receiver that plays in sync needs
// one to start and learns the sender's pace from several, so more often
// than RTCP's usual 5 s (RFC 3550 §6.2 allows it for small sessions); at
// about 100 bytes a second it is nothing beside the audio.
constexpr uint32_t kReportSeconds = 1;
// The first few come faster: a receiver that opened after the sender (on
// the same server, where sinks open before sources, or a room that joins)
// missed the one sent with the first packet and would hear nothing until
// the next.
constexpr uint32_t kEarlyReports = 4;
constexpr uint32_t kEarlyReportsPerSecond = 5;

// Sound-free audio for this long stops the packets (see the header).
constexpr uint32_t kSilenceSeconds = 1;
// The largest Opus packet of one frame (RFC 6716 §3.4, R5).
constexpr size_t kMaxOpusPacket = 1275;

template <class T>
T random_value() {
    T value{};
    // Random SSRC, sequence and timestamp origin (RFC 3550 §5.1, §8.1).
    if (getrandom(&value, sizeof value, 0) != sizeof value) {
        value = static_cast<T>(getpid() ^ static_cast<unsigned>(time(nullptr)));
    }
    return value;
}

bool all_zero(const uint8_t* data, size_t size) noexcept {
    for (size_t i = 0; i < size; ++i) {
        if (data[i] != 0) {
            return false;
        }
    }
    return true;
}

std::string cname_for(const LocalAddress& local) {
    char user[64] = "audiod";
    if (const char* name = getenv("USER"); name != nullptr && *name != '\0') {
        std::snprintf(user, sizeof user, "%s", name);
    }
    return std::string(user) + "@" + local.text;
}

} // namespace

RtpSender::RtpSender(const RtpSendOptions& options, uint32_t rate, uint32_t channels)
    : options_(options)
    , rate_(rate)
    , channels_(channels)
    , frame_bytes_(channels * (options.encoding == Encoding::l16 ? 2 : 4)) {}

std::unique_ptr<RtpSender> RtpSender::create(const RtpSendOptions& options, uint32_t rate,
                                             uint32_t channels, const UdpEndpoint& to,
                                             std::string& error) {
    std::unique_ptr<RtpSender> s(new RtpSender(options, rate, channels));
    s->rtp_to_ = to;
    s->rtcp_to_ = to.with_port(static_cast<uint16_t>(to.port + 1));
    s->rtp_fd_ = open_sender_socket(to, options.ttl, error);
    if (!s->rtp_fd_) {
        return nullptr;
    }
    s->rtcp_fd_ = open_sender_socket(to, options.ttl, error);
    if (!s->rtcp_fd_) {
        return nullptr;
    }
    if (!options.ptp4l.empty()) {
        s->ptp_ = PtpFollower::start(options.ptp4l, error);
        if (s->ptp_ == nullptr) {
            return nullptr;
        }
    }
    if (options.encoding == Encoding::opus) {
        int rc = OPUS_OK;
        s->encoder_ =
            opus_encoder_create(48000, static_cast<int>(channels), OPUS_APPLICATION_AUDIO, &rc);
        if (s->encoder_ == nullptr || rc != OPUS_OK) {
            error = std::string("cannot create the Opus encoder: ") + opus_strerror(rc);
            return nullptr;
        }
        opus_int32 lookahead = 0;
        if (opus_encoder_ctl(s->encoder_, OPUS_SET_BITRATE(static_cast<opus_int32>(
                                              options.bitrate))) != OPUS_OK ||
            opus_encoder_ctl(s->encoder_, OPUS_SET_INBAND_FEC(options.fec ? 1 : 0)) != OPUS_OK ||
            opus_encoder_ctl(s->encoder_, OPUS_SET_PACKET_LOSS_PERC(static_cast<opus_int32>(
                                              options.fec ? options.expected_loss : 0))) !=
                OPUS_OK ||
            opus_encoder_ctl(s->encoder_, OPUS_GET_LOOKAHEAD(&lookahead)) != OPUS_OK) {
            error = "the Opus encoder refused its settings";
            return nullptr;
        }
        s->lookahead_ = static_cast<uint32_t>(lookahead);
    }
    s->cname_ = cname_for(local_address_for(to));
    s->pending_.assign(size_t{options.packet_frames} * s->frame_bytes_, 0);
    const size_t payload =
        options.encoding == Encoding::opus
            ? kMaxOpusPacket
            : size_t{options.packet_frames} * channels * pcm_sample_bytes(options.encoding);
    s->packet_.assign(kHeaderSize + payload, 0);
    if (options.resend) {
        s->copy_.assign(s->packet_.size(), 0);
    }
    s->ssrc_ = random_value<uint32_t>();
    s->sequence_ = random_value<uint16_t>();
    s->timestamp_ = random_value<uint32_t>();
    return s;
}

RtpSender::~RtpSender() {
    if (encoder_ != nullptr) {
        opus_encoder_destroy(encoder_);
    }
}

int RtpSender::sample_format() const noexcept {
    switch (options_.encoding) {
    case Encoding::opus:
        return AUDIOD_FORMAT_F32LE;
    case Encoding::l16:
        return AUDIOD_FORMAT_S16LE;
    case Encoding::l24:
        return AUDIOD_FORMAT_S32LE; // the server's mix formats have no packed 24-bit
    }
    return AUDIOD_FORMAT_S16LE;
}

uint32_t RtpSender::latency_frames() const noexcept {
    return options_.packet_frames + lookahead_;
}

void RtpSender::write_rt(const void* frames, uint32_t count, int64_t due_ns) noexcept {
    if (options_.aes67) {
        follow_media_clock_rt(due_ns);
    }
    frames_since_poll_ += count;
    if (frames_since_poll_ >= rate_ / 10) { // ten times a second
        frames_since_poll_ = 0;
        poll_receivers_rt();
    }
    cycle_timestamp_ = timestamp_ + pending_frames_;
    cycle_due_ns_ = due_ns;
    const auto* in = static_cast<const uint8_t*>(frames);
    while (count > 0) {
        const uint32_t take = std::min(count, options_.packet_frames - pending_frames_);
        std::memcpy(pending_.data() + size_t{pending_frames_} * frame_bytes_, in,
                    size_t{take} * frame_bytes_);
        pending_frames_ += take;
        in += size_t{take} * frame_bytes_;
        count -= take;
        if (pending_frames_ == options_.packet_frames) {
            send_packet_rt();
            pending_frames_ = 0;
        }
    }
}

int64_t RtpSender::reference_minus_monotonic_ns() const noexcept {
    // The reference clock: CLOCK_TAI, or the grandmaster's time as ptp4l
    // measures this machine's clock against it.
    if (ptp_ == nullptr) {
        return tai_minus_monotonic_ns();
    }
    return wall_minus_monotonic_ns() - ptp_->wall_ahead_ns() + ptp_->timescale_minus_utc_ns();
}

void RtpSender::follow_media_clock_rt(int64_t due_ns) noexcept {
    // The frame due at `due_ns` carries the reference clock's time then.
    // The sink's timer runs on CLOCK_MONOTONIC, which the time daemon
    // steers at the same rate as CLOCK_TAI, so once set the count keeps
    // in step; it is set again only when the clock was stepped (over a
    // millisecond off), which receivers see as a jump.
    const uint32_t wanted =
        media_clock_at(due_ns + reference_minus_monotonic_ns(), rate_, options_.mediaclk_offset) -
        pending_frames_;
    const auto off = static_cast<int32_t>(wanted - timestamp_);
    if (!on_media_clock_ || std::abs(off) > static_cast<int32_t>(rate_ / 1000)) {
        timestamp_ = wanted;
        marker_ = true;
        on_media_clock_ = true;
    }
}

void RtpSender::poll_receivers_rt() noexcept {
    // A few at a time: a flood of them waits for the next poll.
    uint8_t datagram[1500];
    for (int i = 0; i < 32; ++i) {
        const ssize_t n = recv(rtcp_fd_.get(), datagram, sizeof datagram, MSG_DONTWAIT);
        if (n < 0) {
            return;
        }
        RtcpSummary summary;
        if (parse_rtcp({datagram, static_cast<size_t>(n)}, summary)) {
            receivers_.take_rt(summary, monotonic_ns(), options_.clock_rate);
        }
    }
}

void RtpSender::send_packet_rt() noexcept {
    const uint32_t frames = options_.packet_frames;
    resend_rt(); // the last packet's copy goes first, a ptime after it
    if (all_zero(pending_.data(), pending_.size())) {
        silent_frames_ += frames;
    } else {
        silent_frames_ = 0;
    }
    const bool suppress =
        options_.suppress_silence && silent_frames_ > uint64_t{kSilenceSeconds} * rate_;
    if (suppress) {
        marker_ = true; // the next packet sent starts a talkspurt
        silent_.store(true, std::memory_order_relaxed);
    } else {
        silent_.store(false, std::memory_order_relaxed);
        const size_t payload =
            encode_rt(packet_.data() + kHeaderSize, packet_.size() - kHeaderSize);
        if (payload > 0) {
            write_header({marker_, options_.payload_type, sequence_, timestamp_, ssrc_},
                         packet_.data());
            marker_ = false;
            // A packet the network refuses still takes its sequence number, so
            // the receiver sees a loss (and conceals it) rather than a jump.
            ++sequence_;
            bool refused = false;
            const int rc =
                send_rt(rtp_fd_.get(), rtp_to_, packet_.data(), kHeaderSize + payload, &refused);
            if (refused) {
                count_refusal_rt();
            }
            if (rc != 0) {
                count_drop_rt(rc);
            } else {
                packets_.fetch_add(1, std::memory_order_relaxed);
                octets_.fetch_add(payload, std::memory_order_relaxed);
            }
            if (options_.resend) { // even one the network refused: it may take the copy
                std::memcpy(copy_.data(), packet_.data(), kHeaderSize + payload);
                copy_size_ = kHeaderSize + payload;
            }
        }
    }
    timestamp_ += frames;
    frames_since_report_ += frames;
    const uint64_t interval = reports_sent_ < kEarlyReports ? rate_ / kEarlyReportsPerSecond
                                                            : uint64_t{kReportSeconds} * rate_;
    if (!suppress && (reports_sent_ == 0 || frames_since_report_ >= interval)) {
        send_report_rt();
    }
}

size_t RtpSender::encode_rt(uint8_t* out, size_t room) noexcept {
    const size_t samples = size_t{options_.packet_frames} * channels_;
    switch (options_.encoding) {
    case Encoding::opus: {
        const opus_int32 bytes = opus_encode_float(
            encoder_, reinterpret_cast<const float*>(pending_.data()),
            static_cast<int>(options_.packet_frames), out, static_cast<opus_int32>(room));
        if (bytes < 0) {
            encode_errors_.fetch_add(1, std::memory_order_relaxed);
            return 0;
        }
        return static_cast<size_t>(bytes);
    }
    case Encoding::l16:
        pack_l16(reinterpret_cast<const int16_t*>(pending_.data()), samples, out);
        return samples * 2;
    case Encoding::l24:
        pack_l24(reinterpret_cast<const int32_t*>(pending_.data()), samples, out);
        return samples * 3;
    }
    return 0;
}

void RtpSender::resend_rt() noexcept {
    if (copy_size_ == 0) {
        return;
    }
    bool refused = false;
    const int rc = send_rt(rtp_fd_.get(), rtp_to_, copy_.data(), copy_size_, &refused);
    if (refused) {
        count_refusal_rt();
    }
    if (rc != 0) {
        count_drop_rt(rc);
    } else {
        resent_.fetch_add(1, std::memory_order_relaxed);
    }
    copy_size_ = 0;
}

void RtpSender::send_report_rt() noexcept {
    // The report maps the RTP time of this cycle's first frame to the wall
    // time it was due. Opus's decoder gives a frame back `lookahead_` later
    // in the RTP timeline than it went in, so the time is the decoded
    // frame's: a receiver then needs to know nothing of the codec.
    SenderReport report;
    report.ssrc = ssrc_;
    report.ntp_time = ntp_from_unix_ns(cycle_due_ns_ + wall_minus_monotonic_ns() -
                                       (ptp_ != nullptr ? ptp_->wall_ahead_ns() : 0));
    report.rtp_timestamp = cycle_timestamp_ + lookahead_;
    report.packet_count = static_cast<uint32_t>(packets_.load(std::memory_order_relaxed));
    report.octet_count = static_cast<uint32_t>(octets_.load(std::memory_order_relaxed));
    uint8_t buffer[kMaxSenderRtcpSize];
    size_t size = write_sender_report(report, cname_, buffer);
    if (controlling_.load(std::memory_order_acquire)) {
        // The last whole copy: one the control thread is writing now waits
        // for the next report.
        (void)controls_.try_read(rt_controls_);
        size += write_room_controls(ssrc_, rt_controls_, buffer + size);
    }
    (void)send_rt(rtcp_fd_.get(), rtcp_to_, buffer, size); // a lost report is harmless
    frames_since_report_ = 0;
    reports_sent_ += reports_sent_ < kEarlyReports ? 1 : 0;
}

std::string RtpSender::control_room(const RoomControl& room, unsigned fields) {
    std::lock_guard lock(controls_mutex_);
    const std::string_view name(room.name, room.name_size);
    auto same = std::find_if(wanted_.begin(), wanted_.end(), [&](const RoomControl& r) {
        return std::string_view(r.name, r.name_size) == name;
    });
    if (same == wanted_.end()) {
        if (wanted_.size() >= kMaxRoomControls) {
            return "at most " + std::to_string(kMaxRoomControls) +
                   " rooms can be asked for settings of a sender (reset one first)";
        }
        RoomControl fresh;
        std::memcpy(fresh.name, room.name, sizeof fresh.name);
        fresh.name_size = room.name_size;
        wanted_.push_back(fresh);
        same = wanted_.end() - 1;
    }
    if ((fields & kRoomVolume) != 0) {
        same->volume = room.volume;
    }
    if ((fields & kRoomMute) != 0) {
        same->muted = room.muted;
    }
    if ((fields & kRoomDelay) != 0) {
        same->has_delay = room.has_delay;
        same->delay_ms = room.delay_ms;
    }
    publish_controls();
    return {};
}

bool RtpSender::release_room(std::string_view name) {
    std::lock_guard lock(controls_mutex_);
    const size_t before = wanted_.size();
    std::erase_if(wanted_, [&](const RoomControl& r) {
        return std::string_view(r.name, r.name_size) == name;
    });
    if (wanted_.size() == before) {
        return false;
    }
    publish_controls();
    return true;
}

void RtpSender::publish_controls() {
    RoomControls controls;
    controls.count = static_cast<uint8_t>(std::min(wanted_.size(), kMaxRoomControls));
    std::copy_n(wanted_.begin(), controls.count, controls.rooms);
    controls_.publish(controls);
    controlling_.store(true, std::memory_order_release);
}

std::string RtpSender::describe_controls() const {
    std::lock_guard lock(controls_mutex_);
    std::string text;
    for (const RoomControl& room : wanted_) {
        char line[160];
        std::snprintf(line, sizeof line, "room-control.%.*s=volume=%.2f;mute=%s;delay-ms=%s\n",
                      static_cast<int>(room.name_size), room.name, room.volume,
                      room.muted ? "yes" : "no",
                      room.has_delay ? std::to_string(room.delay_ms).c_str() : "own");
        text += line;
    }
    return text;
}

void RtpSender::stop_rt() noexcept {
    uint8_t buffer[kMaxRtcpSize];
    const size_t size = write_bye(ssrc_, buffer);
    (void)send_rt(rtcp_fd_.get(), rtcp_to_, buffer, size);
}

void RtpSender::count_refusal_rt() noexcept {
    refused_.fetch_add(1, std::memory_order_relaxed);
    last_error_.store(ECONNREFUSED, std::memory_order_relaxed);
}

void RtpSender::count_drop_rt(int error) noexcept {
    dropped_.fetch_add(1, std::memory_order_relaxed);
    last_error_.store(error, std::memory_order_relaxed);
}

SenderStats RtpSender::stats() const noexcept {
    SenderStats s;
    s.packets = packets_.load(std::memory_order_relaxed);
    s.octets = octets_.load(std::memory_order_relaxed);
    s.dropped = dropped_.load(std::memory_order_relaxed);
    s.refused = refused_.load(std::memory_order_relaxed);
    s.resent = resent_.load(std::memory_order_relaxed);
    s.encode_errors = encode_errors_.load(std::memory_order_relaxed);
    s.last_error = last_error_.load(std::memory_order_relaxed);
    s.silent = silent_.load(std::memory_order_relaxed);
    return s;
}

} // namespace audiod::rtp
