#include "rtp_receiver.h"
#include "media_clock.h"
#include "monotonic_time.h"

#include "audiod/audiod.h"
#include "rtcp.h"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <netdb.h>
#include <opus.h>
#include <poll.h>
#include <sys/eventfd.h>
#include <sys/random.h>
#include <sys/socket.h>

namespace audiod::rtp {

namespace {

// The longest packet accepted: 120 ms, Opus's longest.
constexpr uint32_t kMaxPacketFrames = 5760;
// Ring of decoded audio: at least this many seconds, whatever the latency.
constexpr uint32_t kBufferSeconds = 2;
// How late this thread may wake for a deadline (a loaded machine's
// scheduling).
constexpr uint32_t kWakeSlackMs = 5;
// The fade over a concealed or restarted PCM packet.
constexpr uint32_t kFadeFrames = 48;

std::string address_text(const sockaddr_storage& from) {
    char host[NI_MAXHOST] = "";
    char port[NI_MAXSERV] = "";
    getnameinfo(reinterpret_cast<const sockaddr*>(&from), sizeof from, host, sizeof host, port,
                sizeof port, NI_NUMERICHOST | NI_NUMERICSERV);
    const bool v6 = from.ss_family == AF_INET6;
    char text[NI_MAXHOST + NI_MAXSERV + 4];
    std::snprintf(text, sizeof text, v6 ? "[%s]:%s" : "%s:%s", host, port);
    return text;
}

bool is_allowed(const std::vector<AddressPrefix>& allow, const sockaddr_storage& from) {
    if (from.ss_family == AF_INET6) {
        const auto* a = reinterpret_cast<const sockaddr_in6*>(&from);
        return allowed(allow, a->sin6_addr.s6_addr, true);
    }
    const auto* a = reinterpret_cast<const sockaddr_in*>(&from);
    return allowed(allow, reinterpret_cast<const uint8_t*>(&a->sin_addr), false);
}

} // namespace

std::unique_ptr<RtpReceiver> RtpReceiver::create(const RtpReceiveOptions& options, uint32_t rate,
                                                 uint32_t quantum, std::string& error) {
    std::unique_ptr<RtpReceiver> r(new RtpReceiver(options));
    if (getrandom(&r->own_ssrc_, sizeof r->own_ssrc_, 0) != sizeof r->own_ssrc_) {
        r->own_ssrc_ = static_cast<uint32_t>(monotonic_ns());
    }
    const auto local = resolve_endpoint(options.address, options.port, error);
    if (!local) {
        error = "rtp source option address: " + error;
        return nullptr;
    }
    r->local_ = *local;
    if (!options.ptp4l.empty()) {
        r->ptp_ = PtpFollower::start(options.ptp4l, error);
        if (r->ptp_ == nullptr) {
            return nullptr;
        }
    }
    r->rtp_fd_ = open_receiver_socket(*local, error);
    if (!r->rtp_fd_) {
        return nullptr;
    }
    // RTCP (for BYE) on the next port; a source without it still plays.
    std::string ignored;
    if (options.port < 65535) {
        r->rtcp_fd_ = open_receiver_socket(local->with_port(options.port + 1), ignored);
    }
    r->stop_fd_.reset(eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC));
    if (!r->stop_fd_) {
        error = std::string("eventfd: ") + std::strerror(errno);
        return nullptr;
    }
    if (options.encoding == Encoding::opus) {
        int rc = OPUS_OK;
        r->decoder_ = opus_decoder_create(48000, static_cast<int>(options.channels), &rc);
        if (r->decoder_ == nullptr || rc != OPUS_OK) {
            error = std::string("cannot create the Opus decoder: ") + opus_strerror(rc);
            return nullptr;
        }
    }
    const uint32_t latency = options.clock_rate / 1000 * options.latency_ms;
    const uint32_t capacity = std::max(options.clock_rate * kBufferSeconds, 4 * latency);
    r->buffer_ = std::make_unique<PlayoutBuffer>(options.channels, capacity, options.clock_rate,
                                                 rate, latency);
    r->quantum_in_ = static_cast<uint32_t>(uint64_t{quantum} * options.clock_rate / rate + 1);
    r->decoded_.assign(size_t{kMaxPacketFrames} * options.channels, 0);
    r->previous_.assign(size_t{kMaxPacketFrames} * options.channels, 0);
    r->thread_ = std::thread([raw = r.get()] { raw->run(); });
    return r;
}

RtpReceiver::~RtpReceiver() {
    if (thread_.joinable()) {
        const uint64_t one = 1;
        (void)!write(stop_fd_.get(), &one, sizeof one);
        thread_.join();
    }
    if (decoder_ != nullptr) {
        opus_decoder_destroy(decoder_);
    }
}

void RtpReceiver::run() {
    std::array<uint8_t, 2048> datagram{};
    for (;;) {
        pollfd fds[3] = {
            {stop_fd_.get(), POLLIN, 0}, {rtp_fd_.get(), POLLIN, 0}, {rtcp_fd_.get(), POLLIN, 0}};
        const int ready = poll(fds, rtcp_fd_ ? 3 : 2, wait_ms());
        if (ready < 0 && errno != EINTR) {
            return;
        }
        if ((fds[0].revents & POLLIN) != 0) {
            return;
        }
        for (int i = 1; i < 3 && ready > 0; ++i) {
            if ((fds[i].revents & POLLIN) == 0) {
                continue;
            }
            for (;;) {
                sockaddr_storage from{};
                socklen_t from_size = sizeof from;
                const ssize_t n = recvfrom(fds[i].fd, datagram.data(), datagram.size(), MSG_TRUNC,
                                           reinterpret_cast<sockaddr*>(&from), &from_size);
                if (n < 0) {
                    break;
                }
                if (static_cast<size_t>(n) > datagram.size()) {
                    malformed_.fetch_add(1, std::memory_order_relaxed); // larger than any we take
                    continue;
                }
                if (!is_allowed(options_.allow, from)) {
                    refused_.fetch_add(1, std::memory_order_relaxed);
                    continue;
                }
                if (i == 1) {
                    on_rtp(datagram.data(), static_cast<size_t>(n), from);
                } else {
                    on_rtcp(datagram.data(), static_cast<size_t>(n), from);
                }
            }
        }
        advance();
        report_to_sender();
    }
}

int RtpReceiver::wait_ms() const noexcept {
    if (!in_session_ || highest_seq_ < next_seq_) {
        return 100; // nothing missing: sleep until a packet comes
    }
    // A gap: wake when its deadline comes.
    const int64_t margin = decoded_end_ - (buffer_->read_position() + guard());
    const auto ms = margin * 1000 / int64_t{options_.clock_rate};
    return static_cast<int>(std::clamp<int64_t>(ms, 1, 100));
}

int64_t RtpReceiver::guard() const noexcept {
    // The reader's next quantum and this thread's wake-up slack: waiting
    // longer for a missing packet gives its successor (which carries its
    // FEC) time to arrive.
    return quantum_in_ + options_.clock_rate / 1000 * kWakeSlackMs + 4;
}

int32_t RtpReceiver::frames_of(std::span<const uint8_t> payload) const noexcept {
    if (options_.encoding == Encoding::opus) {
        const int frames = opus_packet_get_nb_samples(
            payload.data(), static_cast<opus_int32>(payload.size()), 48000);
        return frames > 0 && frames <= static_cast<int>(kMaxPacketFrames) ? frames : -1;
    }
    const size_t frame_bytes = pcm_sample_bytes(options_.encoding) * options_.channels;
    if (payload.size() % frame_bytes != 0 || payload.size() / frame_bytes > kMaxPacketFrames) {
        return -1;
    }
    return static_cast<int32_t>(payload.size() / frame_bytes);
}

void RtpReceiver::on_rtcp(const uint8_t* data, size_t size, const sockaddr_storage& from) {
    RtcpSummary summary;
    if (!parse_rtcp({data, size}, summary)) {
        return;
    }
    if (in_session_ && summary.has_report && summary.report.ssrc == ssrc_) {
        // Where to report back to, and what to say we last heard.
        sender_rtcp_ = from;
        have_sender_rtcp_ = true;
        last_report_ntp_ = static_cast<uint32_t>(summary.report.ntp_time >> 16);
        last_report_at_ns_ = monotonic_ns();
    }
    if (options_.direct_clock) {
        // The RTP times say when; a report's wall clock may be another
        // timescale than the reference's, and is not mixed in.
        summary.has_report = false;
    }
    if (!in_session_) {
        // A sender reports right after its first packet, and the report
        // may be read first: it is kept for the session that packet starts.
        if (summary.has_report) {
            early_report_ = summary.report;
        }
        return;
    }
    if (summary.bye) {
        bye_ = true; // the next SSRC may take over at once
    }
    if (summary.has_controls && summary.controls_ssrc == ssrc_) {
        take_controls(summary);
    }
    if (summary.has_report && summary.report.ssrc == ssrc_) {
        take_report(summary.report);
    }
}

void RtpReceiver::take_controls(const RtcpSummary& summary) {
    // The sender lists every room it asks something of: one it does not
    // name goes back to its own settings.
    const RoomControl* mine = nullptr;
    for (uint8_t i = 0; i < summary.controls.count; ++i) {
        const RoomControl& room = summary.controls.rooms[i];
        if (std::string_view(room.name, room.name_size) == options_.member_name) {
            mine = &room;
        }
    }
    const RoomControl own;
    const RoomControl& room = mine != nullptr ? *mine : own;
    sender_volume_.store(static_cast<float>(room.volume), std::memory_order_relaxed);
    sender_muted_.store(room.muted, std::memory_order_relaxed);
    sender_delay_ms_.store(room.has_delay ? int32_t{room.delay_ms} : -1, std::memory_order_relaxed);
    sender_controls_.store(mine != nullptr, std::memory_order_relaxed);
}

uint32_t RtpReceiver::delay_ms() const noexcept {
    // A trim this room cannot take (a frame must still have come through
    // the jitter buffer when it is played that much earlier) is not taken.
    const int32_t asked = sender_delay_ms_.load(std::memory_order_relaxed);
    if (asked >= 0 && uint32_t(asked) + options_.latency_ms < options_.link_offset_ms) {
        return static_cast<uint32_t>(asked);
    }
    return options_.delay_ms;
}

void RtpReceiver::set_playout(bool timed, double sync_error_us, uint64_t realigns) noexcept {
    play_timed_.store(timed, std::memory_order_relaxed);
    play_error_us_.store(sync_error_us, std::memory_order_relaxed);
    play_realigns_.store(realigns, std::memory_order_relaxed);
    play_known_.store(true, std::memory_order_relaxed);
}

void RtpReceiver::report_to_sender() {
    const int64_t now = monotonic_ns();
    if (!in_session_ || !have_sender_rtcp_ || !rtcp_fd_ ||
        now - reported_at_ns_ < kReportIntervalNs) {
        return;
    }
    reported_at_ns_ = now;
    // RFC 3550 §6.4.1 and A.3: what was lost of what was expected, in all
    // and since the last report.
    const uint64_t expected = highest_seq_ + 1 - base_seq_;
    const uint64_t lost = expected > session_received_ ? expected - session_received_ : 0;
    const uint64_t expected_interval = expected - expected_prior_;
    const uint64_t received_interval = session_received_ - received_prior_;
    expected_prior_ = expected;
    received_prior_ = session_received_;
    const uint64_t lost_interval =
        expected_interval > received_interval ? expected_interval - received_interval : 0;
    ReceiverReport report;
    report.ssrc = own_ssrc_;
    report.source_ssrc = ssrc_;
    report.fraction_lost = static_cast<uint8_t>(
        expected_interval == 0 ? 0
                               : std::min<uint64_t>(255, (lost_interval << 8) / expected_interval));
    report.cumulative_lost = static_cast<uint32_t>(std::min<uint64_t>(lost, 0xffffff));
    report.highest_sequence = static_cast<uint32_t>(highest_seq_);
    report.jitter = static_cast<uint32_t>(jitter_.load(std::memory_order_relaxed));
    report.last_report = last_report_ntp_;
    report.report_delay = static_cast<uint32_t>((now - last_report_at_ns_) * 65536 / 1'000'000'000);
    PlayoutReport playout;
    playout.timed = play_timed_.load(std::memory_order_relaxed);
    playout.clock = static_cast<uint8_t>(reports_.load(std::memory_order_relaxed) == 0 ? 0
                                         : options_.direct_clock                       ? 2
                                                                                       : 1);
    playout.sync_error_us = play_error_us_.load(std::memory_order_relaxed);
    playout.realigns = static_cast<uint32_t>(play_realigns_.load(std::memory_order_relaxed));
    playout.link_offset_ms = static_cast<uint16_t>(options_.link_offset_ms);
    playout.delay_ms = static_cast<uint16_t>(delay_ms());
    uint8_t buffer[kMaxRtcpSize];
    const size_t size = write_receiver_report(
        report, options_.member_name,
        options_.timed && play_known_.load(std::memory_order_relaxed) ? &playout : nullptr, buffer);
    const socklen_t length =
        sender_rtcp_.ss_family == AF_INET6 ? sizeof(sockaddr_in6) : sizeof(sockaddr_in);
    (void)sendto(rtcp_fd_.get(), buffer, size, MSG_DONTWAIT,
                 reinterpret_cast<const sockaddr*>(&sender_rtcp_),
                 length); // a lost one is harmless
}

void RtpReceiver::read_media_clock(uint32_t timestamp) {
    // A report of our own making, once a second of the sender's time: the
    // RTP time is the reference clock's (TAI), which is the wall clock
    // plus the kernel's TAI offset; or, following ptp4l, the grandmaster's
    // time, which is UTC plus its UTC offset when it counts PTP time (the
    // wall clock's own error is taken off where the room plays,
    // RtpSource::media_time_rt).
    if (direct_reported_ &&
        static_cast<int32_t>(timestamp - direct_timestamp_) < int32_t(options_.clock_rate)) {
        return;
    }
    const int64_t reference_minus_wall =
        ptp_ != nullptr ? ptp_->timescale_minus_utc_ns() : tai_minus_wall_ns();
    const int64_t reference_now = clock_ns(CLOCK_REALTIME) + reference_minus_wall;
    const int64_t reference =
        media_clock_time(timestamp, options_.clock_rate, options_.mediaclk_offset, reference_now);
    SenderReport report;
    report.ssrc = ssrc_;
    report.rtp_timestamp = timestamp;
    report.ntp_time = ntp_from_unix_ns(reference - reference_minus_wall);
    take_report(report);
    direct_reported_ = true;
    direct_timestamp_ = timestamp;
}

void RtpReceiver::take_report(const SenderReport& report) {
    // The report's RTP time on this session's timeline, as a packet's
    // would be, and where the buffer holds it.
    const int64_t position = last_position_ + static_cast<int32_t>(report.rtp_timestamp - last_ts_);
    sender_clock_.add(position + offset_, unix_ns_from_ntp(report.ntp_time));
    timeline_.publish(sender_clock_.timeline());
    reports_.fetch_add(1, std::memory_order_relaxed);
}

void RtpReceiver::begin_session(const RtpPacket& packet, const sockaddr_storage& from) {
    in_session_ = true;
    bye_ = false;
    behind_since_ns_ = 0;
    ssrc_ = packet.header.ssrc;
    current_ssrc_.store(ssrc_, std::memory_order_relaxed);
    // Another sender asks nothing until it says so.
    sender_volume_.store(1, std::memory_order_relaxed);
    sender_muted_.store(false, std::memory_order_relaxed);
    sender_delay_ms_.store(-1, std::memory_order_relaxed);
    sender_controls_.store(false, std::memory_order_relaxed);
    sessions_.fetch_add(1, std::memory_order_relaxed);
    for (Waiting& w : window_) {
        w.present = false;
    }
    next_seq_ = highest_seq_ = packet.header.sequence + (uint64_t{1} << 32);
    base_seq_ = next_seq_;
    session_received_ = expected_prior_ = received_prior_ = 0;
    have_sender_rtcp_ = false;
    last_seq16_ = packet.header.sequence;
    last_ts_ = packet.header.timestamp;
    last_position_ = 0;
    decoded_end_ = 0;
    offset_ = 0;
    decoded_history_ = 0;
    have_transit_ = false;
    fade_in_ = true;
    if (decoder_ != nullptr) {
        opus_decoder_ctl(decoder_, OPUS_RESET_STATE);
    }
    buffer_->start_epoch(0, true);
    sender_clock_.clear();
    direct_reported_ = false;
    timeline_.publish(SenderTimeline{});
    reports_.store(0, std::memory_order_relaxed);
    if (early_report_ && early_report_->ssrc == ssrc_) {
        take_report(*early_report_);
    }
    early_report_.reset();
    std::lock_guard lock(sender_mutex_);
    sender_ = address_text(from);
}

void RtpReceiver::on_rtp(const uint8_t* data, size_t size, const sockaddr_storage& from) {
    RtpPacket packet;
    if (parse_packet({data, size}, packet) != PacketError::none) {
        malformed_.fetch_add(1, std::memory_order_relaxed);
        return;
    }
    if (packet.header.payload_type != options_.payload_type) {
        wrong_type_.fetch_add(1, std::memory_order_relaxed);
        return;
    }
    const int32_t frames = frames_of(packet.payload);
    if (frames < 0) {
        malformed_.fetch_add(1, std::memory_order_relaxed);
        return;
    }
    const int64_t arrival = monotonic_ns();
    const int64_t silent_ms =
        (arrival - last_packet_ns_.load(std::memory_order_relaxed)) / 1'000'000;
    if (!in_session_ || (packet.header.ssrc != ssrc_ && (bye_ || silent_ms >= kTakeOverMs))) {
        begin_session(packet, from);
    } else if (packet.header.ssrc != ssrc_) {
        foreign_.fetch_add(1, std::memory_order_relaxed);
        return;
    }
    last_packet_ns_.store(arrival, std::memory_order_relaxed);
    received_.fetch_add(1, std::memory_order_relaxed);
    ++session_received_;

    // Extend sequence number and timestamp by their distance from the last.
    const uint64_t seq = highest_seq_ + static_cast<int16_t>(packet.header.sequence - last_seq16_);
    const int64_t position =
        last_position_ + static_cast<int32_t>(packet.header.timestamp - last_ts_);
    if (seq > highest_seq_) {
        highest_seq_ = seq;
        last_seq16_ = packet.header.sequence;
        last_ts_ = packet.header.timestamp;
        last_position_ = position;
        if (options_.direct_clock) {
            read_media_clock(packet.header.timestamp);
        }
    }

    // Interarrival jitter (RFC 3550 §6.4.1, A.8), in the stream's clock.
    const double transit = double(arrival) * options_.clock_rate / 1e9 - double(position);
    if (have_transit_) {
        const double d = std::fabs(transit - transit_);
        jitter_.store(jitter_.load(std::memory_order_relaxed) +
                          (d - jitter_.load(std::memory_order_relaxed)) / 16,
                      std::memory_order_relaxed);
    }
    transit_ = transit;
    have_transit_ = true;

    if (seq < next_seq_) {
        const uint64_t back = next_seq_ - 1 - seq;
        const bool decoded = back < 64 && ((decoded_history_ >> back) & 1) != 0;
        (decoded ? duplicate_ : late_).fetch_add(1, std::memory_order_relaxed);
        return;
    }
    if (seq >= next_seq_ + kWindow) {
        // Too far ahead to wait for what is between: start over from here.
        begin_session(packet, from);
        return on_rtp(data, size, from);
    }
    Waiting& slot = window_[seq % kWindow];
    if (slot.present && slot.seq == seq) {
        duplicate_.fetch_add(1, std::memory_order_relaxed);
        return;
    }
    slot.present = true;
    slot.seq = seq;
    slot.position = position;
    slot.marker = packet.header.marker;
    slot.size = static_cast<uint16_t>(std::min(packet.payload.size(), slot.data.size()));
    std::memcpy(slot.data.data(), packet.payload.data(), slot.size);
    if (packet_frames_ != static_cast<uint32_t>(frames)) {
        packet_frames_ = static_cast<uint32_t>(frames);
        buffer_->set_packet_frames(packet_frames_);
    }
}

void RtpReceiver::advance() {
    if (!in_session_) {
        return;
    }
    for (;;) {
        Waiting& slot = window_[next_seq_ % kWindow];
        if (slot.present && slot.seq == next_seq_) {
            play(slot);
            slot.present = false;
            decoded_history_ = (decoded_history_ << 1) | 1;
            ++next_seq_;
            continue;
        }
        if (highest_seq_ <= next_seq_) {
            break; // nothing after the gap yet: the sender may have paused
        }
        if (decoded_end_ > buffer_->read_position() + guard()) {
            break; // still time for it to arrive
        }
        conceal();
        decoded_history_ <<= 1;
        ++next_seq_;
    }
}

void RtpReceiver::play(const Waiting& packet) {
    // Decoded audio is continuous: a packet whose timestamp is off from where
    // the last one ended by less than half a packet (encoders' start-up
    // delay, rounding in a sender's clock) is placed right after it, and
    // the difference carried on to the packets that follow. A larger gap is
    // a pause in sending; a larger overlap a sender's jump.
    int64_t at = packet.position + offset_;
    if (decoded_end_ > 0 && std::abs(at - decoded_end_) <= int64_t{packet_frames_} / 2) {
        offset_ += decoded_end_ - at;
        at = decoded_end_;
    }
    const int64_t reader = buffer_->read_position();
    const auto capacity = static_cast<int64_t>(buffer_->capacity());
    const int64_t now = monotonic_ns();
    if (at + int64_t{packet_frames_} > reader) {
        behind_since_ns_ = 0;
    } else if (behind_since_ns_ == 0) {
        behind_since_ns_ = now;
    }
    const bool behind_for_good =
        behind_since_ns_ != 0 && now - behind_since_ns_ > int64_t{options_.latency_ms} * 1'000'000;
    if (at + int64_t{buffer_->latency()} < reader || at + kMaxPacketFrames >= reader + capacity ||
        behind_for_good) {
        // The reader is a whole latency past it (the sender paused and lost
        // its timeline), or has been past every packet for a latency's
        // time, or it is too far ahead: re-align the reader to this audio.
        // A packet only a little late is written as far as it is still
        // ahead of the reader.
        buffer_->start_epoch(at, false);
        decoded_end_ = at;
        fade_in_ = true;
        behind_since_ns_ = 0;
        resyncs_.fetch_add(1, std::memory_order_relaxed);
    } else {
        if (at < reader) {
            overdue_.fetch_add(1, std::memory_order_relaxed);
        }
        if (at > decoded_end_) {
            buffer_->clear(decoded_end_, static_cast<uint32_t>(at - decoded_end_)); // a pause
        }
    }
    const uint32_t channels = options_.channels;
    int32_t frames = 0;
    if (options_.encoding == Encoding::opus) {
        frames = opus_decode_float(decoder_, packet.data.data(), packet.size, decoded_.data(),
                                   static_cast<int>(kMaxPacketFrames), 0);
        if (frames < 0) {
            malformed_.fetch_add(1, std::memory_order_relaxed);
            frames = static_cast<int32_t>(packet_frames_);
            std::fill_n(decoded_.begin(), size_t(frames) * channels, 0.0f);
        }
    } else {
        frames = frames_of({packet.data.data(), packet.size});
        const size_t samples = size_t(frames) * channels;
        if (options_.encoding == Encoding::l16) {
            for (size_t i = 0; i < samples; ++i) {
                int16_t v = 0;
                unpack_l16(packet.data.data() + 2 * i, 1, &v);
                decoded_[i] = float(v) / 32768.0f;
            }
        } else {
            for (size_t i = 0; i < samples; ++i) {
                int32_t v = 0;
                unpack_l24(packet.data.data() + 3 * i, 1, &v);
                decoded_[i] = float(v) / 2147483648.0f;
            }
        }
        if (fade_in_) {
            for (uint32_t f = 0; f < kFadeFrames && f < uint32_t(frames); ++f) {
                for (uint32_t c = 0; c < channels; ++c) {
                    decoded_[f * channels + c] *= float(f) / kFadeFrames;
                }
            }
        }
        std::copy_n(decoded_.begin(), samples, previous_.begin());
        previous_frames_ = static_cast<uint32_t>(frames);
    }
    fade_in_ = false;
    put(at, static_cast<uint32_t>(frames));
}

void RtpReceiver::conceal() {
    const uint32_t channels = options_.channels;
    auto frames = static_cast<int32_t>(packet_frames_);
    if (options_.encoding == Encoding::opus) {
        const Waiting& next = window_[(next_seq_ + 1) % kWindow];
        if (next.present && next.seq == next_seq_ + 1) {
            // In-band FEC: the next packet carries a coarse copy of this one
            // (when the sender encoded it; otherwise this is plain PLC).
            frames = opus_decode_float(decoder_, next.data.data(), next.size, decoded_.data(),
                                       frames, 1);
            recovered_.fetch_add(1, std::memory_order_relaxed);
        } else {
            frames = opus_decode_float(decoder_, nullptr, 0, decoded_.data(), frames, 0);
        }
        if (frames < 0) {
            frames = static_cast<int32_t>(packet_frames_);
            std::fill_n(decoded_.begin(), size_t(frames) * channels, 0.0f);
        }
    } else {
        // The previous packet again, fading out; the next one fades in.
        frames = static_cast<int32_t>(previous_frames_ != 0 ? previous_frames_ : packet_frames_);
        for (int32_t f = 0; f < frames; ++f) {
            const float gain = 1.0f - float(f + 1) / float(frames);
            for (uint32_t c = 0; c < channels; ++c) {
                decoded_[size_t(f) * channels + c] = previous_[size_t(f) * channels + c] * gain;
            }
        }
        fade_in_ = true;
    }
    lost_.fetch_add(1, std::memory_order_relaxed);
    put(decoded_end_, static_cast<uint32_t>(frames));
}

void RtpReceiver::put(int64_t position, uint32_t frames) {
    buffer_->write(position, decoded_.data(), frames);
    decoded_end_ = std::max(decoded_end_, position + frames);
    buffer_->publish(decoded_end_);
}

ReceiverStats RtpReceiver::stats() const {
    ReceiverStats s;
    s.received = received_.load(std::memory_order_relaxed);
    s.lost = lost_.load(std::memory_order_relaxed);
    s.recovered = recovered_.load(std::memory_order_relaxed);
    s.late = late_.load(std::memory_order_relaxed);
    s.overdue = overdue_.load(std::memory_order_relaxed);
    s.duplicate = duplicate_.load(std::memory_order_relaxed);
    s.malformed = malformed_.load(std::memory_order_relaxed);
    s.wrong_type = wrong_type_.load(std::memory_order_relaxed);
    s.refused = refused_.load(std::memory_order_relaxed);
    s.foreign = foreign_.load(std::memory_order_relaxed);
    s.sessions = sessions_.load(std::memory_order_relaxed);
    s.resyncs = resyncs_.load(std::memory_order_relaxed);
    s.reports = reports_.load(std::memory_order_relaxed);
    s.ssrc = current_ssrc_.load(std::memory_order_relaxed);
    const int64_t last = last_packet_ns_.load(std::memory_order_relaxed);
    s.idle = s.sessions == 0 || (monotonic_ns() - last) / 1'000'000 >= kIdleMs;
    s.jitter_ms = jitter_.load(std::memory_order_relaxed) * 1000.0 / options_.clock_rate;
    const PlayoutStatus playout = buffer_->status();
    s.latency_ms = s.idle ? 0 : playout.fill * 1000.0 / options_.clock_rate;
    s.drift_ppm = (playout.ratio - 1) * 1e6;
    std::lock_guard lock(sender_mutex_);
    s.sender = sender_;
    return s;
}

} // namespace audiod::rtp
