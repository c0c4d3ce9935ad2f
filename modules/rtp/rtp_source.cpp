// The RTP source: receives an RTP stream (Opus, L16 or L24; unicast or a
// multicast group, IPv4 or IPv6) and offers it as a capture source, at the
// source's own rate and channels, a steady `latency-ms` behind the sender
// whatever the network's jitter and the two clocks' disagreement.
//
//   [sources.studio]
//   type = "rtp"
//   sdp-file = "/etc/audiod/studio.sdp"   # or: address, port, payload ...
//   latency-ms = 40
//   allow = "192.168.1.0/24"
//
// rtp_receiver.h says how packets become audio, playout_buffer.h how the
// rt thread reads it, clock_follower.h how the sender's clock is followed.
// The source's cycle is paced by a timer, like the null sink.
//
// Timed (`link-offset-ms`): the source says, each cycle, when the frames
// it read are to be heard — when the sender's reports say they were due,
// plus the link offset (sender_clock.h) — and a sink it plays into hears
// them then (server/engine/source_relay.h): every receiver of the stream
// with the same offset plays each frame at the same moment.
//
// With `discover = true` the source plays nothing itself: it listens to
// SAP announcements (sap_discovery.h) and has the server open an RTP
// source per session it hears of, passing on its `latency-ms` and `allow`
// (and the server passes on its `sink`).
#include "rtp_source.h"

#include "audiod/audiod.h"
#include "device_options.h"
#include "module_ops.h"
#include "monotonic_time.h"
#include "rtp_option_reader.h"
#include "rtp_receive_options.h"
#include "rtp_receiver.h"
#include "sap.h"
#include "sap_discovery.h"
#include "timer_clock.h"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <memory>
#include <optional>
#include <string>

namespace audiod::rtp {

namespace {

class RtpSource : public TimerPaced {
public:
    explicit RtpSource(const audiod_device_config& config)
        : TimerPaced(config.rate, config.quantum, TimerClock::AfterXrun::catch_up)
        , channels_(config.channels) {}

    // Thread: control.
    static std::unique_ptr<RtpSource> open(const OpenRequest& request, audiod_open_info* info,
                                           std::string* error, int* code);

    // Thread: rt.
    int read_rt(void* frames, uint32_t frame_count) noexcept;
    void stop_rt() noexcept {}
    // When what read_rt read is to be heard; 0 when untimed, or before the
    // sender's first report. (Not the timer's deadline: that is when it
    // was read.)
    [[nodiscard]] int64_t media_time_rt() const noexcept;

    // How the room plays it, for the reports to the sender. Thread: control.
    void playout(const audiod_playout& p) noexcept {
        if (receiver_ != nullptr) {
            receiver_->set_playout(p.timed != 0, p.sync_error_us, p.realigns);
        }
    }

    // Thread: any.
    size_t describe(char* text, size_t size) const;

private:
    void apply_sender_gain_rt(float* frames, uint32_t frame_count) noexcept;
    size_t describe_discovery(char* text, size_t size) const;

    uint32_t channels_;
    RtpReceiveOptions options_;
    std::unique_ptr<RtpReceiver> receiver_;   // or, discovering:
    std::unique_ptr<SapDiscovery> discovery_; // silence, and sources found
    SenderTimeline timeline_;                 // as read_rt last read it (thread: rt)
    float gain_ = 1;                          // the sender's volume, as last applied (rt)
};

// A discovering source's options: whether it discovers, and the settings
// it passes on. nullopt (with *error empty) when it does not discover.
std::optional<SapDiscovery::Settings> discovery_settings(const audiod_device_config& config,
                                                         std::string& error) {
    OptionReader read(config, "rtp source", error);
    bool discover = false;
    if (!read.boolean("discover", discover) || !discover) {
        return std::nullopt;
    }
    // What it passes on; the sessions it finds say the rest.
    constexpr std::string_view kPassedOn[] = {"latency-ms", "allow", "link-offset-ms", "delay-ms",
                                              "ptp4l"};
    for (size_t i = 0; i < config.option_count; ++i) {
        const std::string_view key = config.options[i].key;
        if (key != "discover" &&
            std::find(std::begin(kPassedOn), std::end(kPassedOn), key) == std::end(kPassedOn)) {
            return read.refuse(key, "a discovering source takes only latency-ms, allow, "
                                    "link-offset-ms, delay-ms and ptp4l (the sessions it finds "
                                    "say the rest)");
        }
    }
    SapDiscovery::Settings settings;
    settings.requester = config.name;
    // Checked here as the sources found will check them.
    std::vector<audiod_option> checked;
    for (const std::string_view key : kPassedOn) {
        if (const auto v = read.get(key)) {
            settings.passed_on.emplace_back(key, *v);
        }
    }
    for (const auto& [key, value] : settings.passed_on) {
        checked.push_back({key.c_str(), value.c_str()});
    }
    audiod_device_config probe = config;
    probe.options = checked.data();
    probe.option_count = checked.size();
    const auto parsed = parse_receive_options(probe, error);
    if (!parsed) {
        return std::nullopt;
    }
    settings.allow = parsed->allow;
    return settings;
}

std::unique_ptr<RtpSource> RtpSource::open(const OpenRequest& request, audiod_open_info* info,
                                           std::string* error, int* code) {
    const audiod_device_config& config = request.config;
    std::string message;
    auto discovering = discovery_settings(config, message);
    if (!message.empty()) {
        return refuse(error, code, message, -EINVAL);
    }
    auto source = std::make_unique<RtpSource>(config);
    if (discovering) {
        source->discovery_ = SapDiscovery::create(request.host, std::move(*discovering), message);
        if (source->discovery_ == nullptr) {
            return refuse(error, code, message, -EIO);
        }
        info->format = AUDIOD_FORMAT_F32LE;
        info->latency_frames = 0;
        return source;
    }
    const auto options = parse_receive_options(config, message);
    if (!options) {
        return refuse(error, code, message, -EINVAL);
    }
    source->options_ = *options;
    source->receiver_ = RtpReceiver::create(*options, config.rate, config.quantum, message);
    if (source->receiver_ == nullptr) {
        return refuse(error, code, message, -EIO);
    }
    info->format = AUDIOD_FORMAT_F32LE;
    info->latency_frames = config.rate / 1000 * options->latency_ms;
    return source;
}

int RtpSource::read_rt(void* frames, uint32_t frame_count) noexcept {
    if (receiver_ == nullptr) {
        std::memset(frames, 0, size_t{frame_count} * channels_ * sizeof(float));
        return 0;
    }
    if (!options_.timed) {
        receiver_->buffer().read_rt(static_cast<float*>(frames), channels_, frame_count);
        apply_sender_gain_rt(static_cast<float*>(frames), frame_count);
        return 0;
    }
    // The sender's pace, from its reports: wall time and ours pass alike.
    // (Read once a cycle; media_time_rt says when by the same.)
    timeline_ = receiver_->timeline();
    receiver_->buffer().set_fixed_ratio_rt(
        timeline_.valid ? 1e9 / options_.clock_rate / timeline_.ns_per_frame : 0);
    receiver_->buffer().read_rt(static_cast<float*>(frames), channels_, frame_count);
    if (!timeline_.valid) {
        // Until the sender says when its audio is due, this room cannot
        // play it in step with the others: silence, rather than a moment
        // out of step and a jump.
        std::memset(frames, 0, size_t{frame_count} * channels_ * sizeof(float));
    }
    apply_sender_gain_rt(static_cast<float*>(frames), frame_count);
    return 0;
}

void RtpSource::apply_sender_gain_rt(float* frames, uint32_t frame_count) noexcept {
    // The volume and mute the sender asks of this room, ramped over the
    // cycle so that a change does not click.
    const float target = receiver_->sender_gain();
    if (target == 1.0f && gain_ == 1.0f) {
        return;
    }
    const float step = (target - gain_) / static_cast<float>(std::max<uint32_t>(frame_count, 1));
    for (uint32_t f = 0; f < frame_count; ++f) {
        const float g = gain_ + step * static_cast<float>(f + 1);
        for (uint32_t c = 0; c < channels_; ++c) {
            frames[size_t{f} * channels_ + c] *= g;
        }
    }
    gain_ = target;
}

int64_t RtpSource::media_time_rt() const noexcept {
    if (receiver_ == nullptr || !options_.timed) {
        return 0;
    }
    const double at = receiver_->buffer().read_start_rt();
    if (std::isnan(at) || !timeline_.valid) {
        return 0;
    }
    // Due on the sender's wall clock, plus the link offset, less this
    // room's own lag, on ours; a wall clock taken to read ahead
    // (reference-offset-us) plays early, unless ptp4l measured it so.
    const double wall = timeline_.wall_at(at) +
                        (double(options_.link_offset_ms) - double(receiver_->delay_ms())) * 1e6;
    const PtpFollower* ptp = receiver_->ptp();
    return static_cast<int64_t>(std::llround(wall)) -
           (wall_minus_monotonic_ns() + options_.reference_offset_us * 1000 -
            (ptp != nullptr ? ptp->wall_ahead_ns() : 0));
}

size_t RtpSource::describe_discovery(char* text, size_t size) const {
    const SapDiscovery::Stats d = discovery_->stats();
    const int n = std::snprintf(
        text, size, "discover=%s:%u\nannouncements=%llu\ndeletions=%llu\nignored=%llu\nfound=%s\n",
        kSapGroupIpv4, kSapPort, static_cast<unsigned long long>(d.announcements),
        static_cast<unsigned long long>(d.deletions), static_cast<unsigned long long>(d.ignored),
        d.sessions.empty() ? "none" : d.sessions.c_str());
    return n < 0 ? 0 : std::min(static_cast<size_t>(n), size > 0 ? size - 1 : 0);
}

size_t RtpSource::describe(char* text, size_t size) const {
    if (discovery_ != nullptr) {
        return describe_discovery(text, size);
    }
    const ReceiverStats s = receiver_->stats();
    const UdpEndpoint& local = receiver_->local();
    const bool v6 = local.ipv6;
    const int n = std::snprintf(
        text, size,
        "listen=%s%s%s:%u\npayload=%s\nsession=%s\nsender=%s\nssrc=%u\nreceived=%llu\nlost=%llu\n"
        "recovered=%llu\nlate=%llu\noverdue=%llu\nduplicate=%llu\nmalformed=%llu\nwrong-type=%llu\n"
        "refused=%llu\nforeign=%llu\nsessions=%llu\nresyncs=%llu\njitter-ms=%.2f\nlatency-ms=%.2f\n"
        "target-ms=%u\ndrift-ppm=%.1f\n",
        v6 ? "[" : "", local.host.c_str(), v6 ? "]" : "", local.port,
        encoding_name(options_.encoding), s.idle ? "idle" : "receiving",
        s.sender.empty() ? "none" : s.sender.c_str(), s.ssrc,
        static_cast<unsigned long long>(s.received), static_cast<unsigned long long>(s.lost),
        static_cast<unsigned long long>(s.recovered), static_cast<unsigned long long>(s.late),
        static_cast<unsigned long long>(s.overdue), static_cast<unsigned long long>(s.duplicate),
        static_cast<unsigned long long>(s.malformed), static_cast<unsigned long long>(s.wrong_type),
        static_cast<unsigned long long>(s.refused), static_cast<unsigned long long>(s.foreign),
        static_cast<unsigned long long>(s.sessions), static_cast<unsigned long long>(s.resyncs),
        s.jitter_ms, s.latency_ms, options_.latency_ms, s.drift_ppm);
    size_t used = n < 0 ? 0 : std::min(static_cast<size_t>(n), size > 0 ? size - 1 : 0);
    if (options_.timed && used < size) {
        // When the sender means its frames to be heard, and how sure that is.
        const SenderTimeline t = receiver_->timeline();
        const int m = std::snprintf(
            text + used, size - used,
            "link-offset-ms=%u\ndelay-ms=%u\nclock-source=%s\nreports=%llu\nsender-ppm=%.1f\n",
            options_.link_offset_ms, receiver_->delay_ms(),
            s.reports == 0          ? "none"
            : options_.direct_clock ? "ptp"
                                    : "rtcp",
            static_cast<unsigned long long>(s.reports),
            t.valid ? (1e9 / options_.clock_rate / t.ns_per_frame - 1) * 1e6 : 0.0);
        used += m < 0 ? 0 : std::min(static_cast<size_t>(m), size - used - 1);
    }
    if (receiver_->sender_controls() && used + 1 < size) {
        // What the sender asks of this room (audioctl group-room on the sender).
        const int32_t delay = receiver_->sender_delay_ms();
        const int m =
            std::snprintf(text + used, size - used, "sender-gain=%.2f\nsender-delay-ms=%s\n",
                          static_cast<double>(receiver_->sender_gain()),
                          delay < 0 ? "own" : std::to_string(delay).c_str());
        used += m < 0 ? 0 : std::min(static_cast<size_t>(m), size - used - 1);
    }
    if (const PtpFollower* ptp = receiver_->ptp(); ptp != nullptr) {
        used = append_details(text, size, used, ptp->describe());
    }
    return used;
}

} // namespace

const audiod_source_ops* source_ops() {
    return &source_table<RtpSource, kSourceOptions>;
}

} // namespace audiod::rtp
