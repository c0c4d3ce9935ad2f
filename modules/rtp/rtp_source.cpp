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
#include "rtp_source.h"

#include "audiod/audiod.h"
#include "rtp_receive_options.h"
#include "rtp_receiver.h"
#include "sink_options.h"
#include "timer_clock.h"

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <memory>
#include <new>

namespace audiod::rtp {

namespace {

struct RtpSource {
    explicit RtpSource(const audiod_sink_config& config)
        : clock(config.rate, config.quantum)
        , channels(config.channels) {}
    TimerClock clock;
    uint32_t channels;
    RtpReceiveOptions options;
    std::unique_ptr<RtpReceiver> receiver;
};

int source_open(const audiod_host*, const audiod_sink_config* config, void** instance,
                audiod_sink_info* info, char* error, size_t error_size) {
    std::string message;
    const auto options = parse_receive_options(*config, message);
    if (!options) {
        set_error(error, error_size, message);
        return -EINVAL;
    }
    auto source = std::unique_ptr<RtpSource>(new (std::nothrow) RtpSource(*config));
    if (source == nullptr) {
        return -ENOMEM;
    }
    source->options = *options;
    source->receiver = RtpReceiver::create(*options, config->rate, config->quantum, message);
    if (source->receiver == nullptr) {
        set_error(error, error_size, message);
        return -EIO;
    }
    info->format = AUDIOD_FORMAT_F32LE;
    info->latency_frames = config->rate / 1000 * options->latency_ms;
    *instance = source.release();
    return 0;
}

int source_start(void* instance) {
    static_cast<RtpSource*>(instance)->clock.start();
    return 0;
}

int source_wait(void* instance) {
    return static_cast<RtpSource*>(instance)->clock.wait();
}

int source_read(void* instance, void* frames, uint32_t frame_count) {
    auto* source = static_cast<RtpSource*>(instance);
    source->receiver->buffer().read_rt(static_cast<float*>(frames), source->channels, frame_count);
    return 0;
}

void source_stop(void*) {}

void source_close(void* instance) {
    delete static_cast<RtpSource*>(instance);
}

uint64_t source_xruns(void* instance) {
    return static_cast<RtpSource*>(instance)->clock.xruns();
}

size_t source_describe(void* instance, char* text, size_t size) {
    const auto* source = static_cast<const RtpSource*>(instance);
    const ReceiverStats s = source->receiver->stats();
    const UdpEndpoint& local = source->receiver->local();
    const bool v6 = local.ipv6;
    const int n = std::snprintf(
        text, size,
        "listen=%s%s%s:%u\npayload=%s\nsession=%s\nsender=%s\nssrc=%u\nreceived=%llu\nlost=%llu\n"
        "recovered=%llu\nlate=%llu\nduplicate=%llu\nmalformed=%llu\nwrong-type=%llu\n"
        "refused=%llu\nforeign=%llu\nsessions=%llu\nresyncs=%llu\njitter-ms=%.2f\nlatency-ms=%.2f\n"
        "target-ms=%u\ndrift-ppm=%.1f\n",
        v6 ? "[" : "", local.host.c_str(), v6 ? "]" : "", local.port,
        encoding_name(source->options.encoding), s.idle ? "idle" : "receiving",
        s.sender.empty() ? "none" : s.sender.c_str(), s.ssrc,
        static_cast<unsigned long long>(s.received), static_cast<unsigned long long>(s.lost),
        static_cast<unsigned long long>(s.recovered), static_cast<unsigned long long>(s.late),
        static_cast<unsigned long long>(s.duplicate), static_cast<unsigned long long>(s.malformed),
        static_cast<unsigned long long>(s.wrong_type), static_cast<unsigned long long>(s.refused),
        static_cast<unsigned long long>(s.foreign), static_cast<unsigned long long>(s.sessions),
        static_cast<unsigned long long>(s.resyncs), s.jitter_ms, s.latency_ms,
        source->options.latency_ms, s.drift_ppm);
    return n < 0 ? 0 : std::min(static_cast<size_t>(n), size > 0 ? size - 1 : 0);
}

constexpr audiod_source_ops kSourceOps = {source_open, source_start, source_wait,  source_read,
                                          source_stop, source_close, source_xruns, source_describe};

} // namespace

const audiod_source_ops* source_ops() {
    return &kSourceOps;
}

} // namespace audiod::rtp
