// The RTP sink: sends the sink's mix to a unicast address or a multicast
// group as standard RTP (Opus, L16 or L24), paced by a timer like the null
// sink, with an SDP file and SAP announcements for receivers.
//
//   [sinks.kitchen]
//   type = "rtp"
//   destination = "239.1.2.3"   # or a host; IPv4 or IPv6
//   port = 46000
//   payload = "opus"            # opus (default), l16, l24
//   sdp-file = "/run/user/1000/kitchen.sdp"
//   announce = true             # SAP, for PulseAudio / PipeWire / audiod
//
// rtp_send_options.h lists every option, rtp_sender.h how a packet is made
// and sent without blocking the rt thread.
#include "rtp_sink.h"

#include "device_options.h"
#include "rtp_send_options.h"
#include "rtp_sender.h"
#include "sap_announcer.h"
#include "sdp.h"
#include "timer_clock.h"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <memory>
#include <new>
#include <string>
#include <unistd.h>

namespace audiod::rtp {

namespace {

struct RtpSink {
    RtpSink(const audiod_device_config& config)
        : clock(config.rate, config.quantum, TimerClock::AfterXrun::catch_up) {}

    TimerClock clock;
    RtpSendOptions options;
    UdpEndpoint destination;
    std::unique_ptr<RtpSender> sender;
    std::unique_ptr<SapAnnouncer> announcer;
};

// Writes the file whole or not at all: a receiver never reads half of it.
bool write_file_atomically(const std::string& path, const std::string& text, std::string& error) {
    const std::string temporary = path + ".tmp";
    FILE* f = std::fopen(temporary.c_str(), "w");
    if (f == nullptr) {
        error = "cannot write sdp-file " + temporary + ": " + std::strerror(errno);
        return false;
    }
    const bool written = std::fwrite(text.data(), 1, text.size(), f) == text.size();
    if (std::fclose(f) != 0 || !written || std::rename(temporary.c_str(), path.c_str()) != 0) {
        error = "cannot write sdp-file " + path + ": " + std::strerror(errno);
        std::remove(temporary.c_str());
        return false;
    }
    return true;
}

SdpDescription describe_session(const RtpSink& sink, const audiod_device_config& config) {
    SdpDescription d;
    d.session_name = sink.options.session_name;
    d.origin_address = local_address_for(sink.destination).text;
    d.session_id = static_cast<uint64_t>(time(nullptr)) ^ sink.sender->ssrc();
    d.session_version = static_cast<uint64_t>(time(nullptr));
    d.address = sink.destination.host;
    d.ipv6 = sink.destination.ipv6;
    d.ttl = static_cast<uint8_t>(sink.options.ttl);
    d.port = sink.destination.port;
    d.payload_type = sink.options.payload_type;
    d.encoding = sink.options.encoding;
    d.rate = sink.options.clock_rate;
    d.channels = config.channels;
    d.ptime_ms = 1000.0 * sink.options.packet_frames / sink.options.clock_rate;
    d.fec = sink.options.fec;
    return d;
}

int rtp_open(const audiod_host*, const audiod_device_config* config, void** instance,
             audiod_open_info* info, char* error, size_t error_size) {
    std::string message;
    auto options = parse_send_options(*config, message);
    if (!options) {
        set_error(error, error_size, message);
        return -EINVAL;
    }
    auto sink = std::unique_ptr<RtpSink>(new (std::nothrow) RtpSink(*config));
    if (sink == nullptr) {
        return -ENOMEM;
    }
    sink->options = *options;
    auto destination = resolve_endpoint(options->destination, options->port, message);
    if (!destination) {
        set_error(error, error_size, "rtp sink option destination: " + message);
        return -EINVAL;
    }
    sink->destination = *destination;
    sink->sender =
        RtpSender::create(*options, config->rate, config->channels, *destination, message);
    if (sink->sender == nullptr) {
        set_error(error, error_size, message);
        return -EIO;
    }
    const std::string sdp = write_sdp(describe_session(*sink, *config));
    if (!options->sdp_file.empty() && !write_file_atomically(options->sdp_file, sdp, message)) {
        set_error(error, error_size, message);
        return -EIO;
    }
    if (options->announce) {
        sink->announcer =
            SapAnnouncer::start(*destination, options->sap_address, options->ttl, sdp, message);
        if (sink->announcer == nullptr) {
            set_error(error, error_size, "cannot announce by SAP: " + message);
            return -EIO;
        }
    }
    info->format = sink->sender->sample_format();
    info->latency_frames = sink->sender->latency_frames();
    *instance = sink.release();
    return 0;
}

int rtp_start(void* instance) {
    static_cast<RtpSink*>(instance)->clock.start();
    return 0;
}

int rtp_wait(void* instance) {
    return static_cast<RtpSink*>(instance)->clock.wait();
}

int rtp_write(void* instance, const void* frames, uint32_t frame_count) {
    static_cast<RtpSink*>(instance)->sender->write_rt(frames, frame_count);
    return 0;
}

void rtp_stop(void* instance) {
    static_cast<RtpSink*>(instance)->sender->stop_rt();
}

void rtp_close(void* instance) {
    auto* sink = static_cast<RtpSink*>(instance);
    sink->announcer.reset(); // sends the SAP deletion
    if (!sink->options.sdp_file.empty()) {
        unlink(sink->options.sdp_file.c_str()); // the session no longer exists
    }
    delete sink;
}

uint64_t rtp_xruns(void* instance) {
    return static_cast<RtpSink*>(instance)->clock.xruns();
}

size_t rtp_describe(void* instance, char* text, size_t size) {
    const auto* sink = static_cast<const RtpSink*>(instance);
    const SenderStats s = sink->sender->stats();
    const bool v6 = sink->destination.ipv6;
    const int n = std::snprintf(
        text, size,
        "destination=%s%s%s:%u\npayload=%s\nptime-ms=%g\nssrc=%u\npackets=%llu\noctets=%llu\n"
        "dropped=%llu\nrefused=%llu\nresent=%llu\nencode-errors=%llu\nlast-error=%s\nsending=%s\n"
        "announced=%llu\n",
        v6 ? "[" : "", sink->destination.host.c_str(), v6 ? "]" : "", sink->destination.port,
        encoding_name(sink->options.encoding), sink->options.ptime_ms, sink->sender->ssrc(),
        static_cast<unsigned long long>(s.packets), static_cast<unsigned long long>(s.octets),
        static_cast<unsigned long long>(s.dropped), static_cast<unsigned long long>(s.refused),
        static_cast<unsigned long long>(s.resent), static_cast<unsigned long long>(s.encode_errors),
        s.last_error != 0 ? strerrorname_np(s.last_error) : "none", s.silent ? "no" : "yes",
        static_cast<unsigned long long>(sink->announcer ? sink->announcer->announcements() : 0));
    return n < 0 ? 0 : std::min(static_cast<size_t>(n), size > 0 ? size - 1 : 0);
}

constexpr audiod_sink_ops kSinkOps = {
    rtp_open,  rtp_start, rtp_wait,     rtp_write,    rtp_stop,
    rtp_close, rtp_xruns, rtp_describe, kSinkOptions, std::size(kSinkOptions)};

} // namespace

const audiod_sink_ops* sink_ops() {
    return &kSinkOps;
}

} // namespace audiod::rtp
