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
#include "module_ops.h"
#include "rtp_send_options.h"
#include "rtp_sender.h"
#include "sap_announcer.h"
#include "sdp.h"
#include "timer_clock.h"

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <memory>
#include <string>
#include <unistd.h>

namespace audiod::rtp {

namespace {

class RtpSink : public TimerPaced {
public:
    explicit RtpSink(const audiod_device_config& config)
        : TimerPaced(config.rate, config.quantum, TimerClock::AfterXrun::catch_up) {}
    // Sends the SAP deletion and removes the SDP file it wrote: the session
    // no longer exists. Thread: control.
    ~RtpSink();
    RtpSink(const RtpSink&) = delete;
    RtpSink& operator=(const RtpSink&) = delete;

    // Thread: control.
    static std::unique_ptr<RtpSink> open(const OpenRequest& request, audiod_open_info* info,
                                         std::string* error, int* code);

    // Thread: rt.
    int write_rt(const void* frames, uint32_t frame_count) noexcept {
        sender_->write_rt(frames, frame_count, clock().cycle_due_ns());
        return 0;
    }
    void stop_rt() noexcept { sender_->stop_rt(); }

    // Thread: any.
    size_t describe(char* text, size_t size) const;
    // What the sink asks of one of its rooms (audiod/module.h `control`).
    // Thread: control.
    int control(const std::string& request, std::string* error);

private:
    [[nodiscard]] SdpDescription session(const audiod_device_config& config) const;

    RtpSendOptions options_;
    UdpEndpoint destination_;
    std::unique_ptr<RtpSender> sender_;
    std::unique_ptr<SapAnnouncer> announcer_;
    bool wrote_sdp_file_ = false;
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

int RtpSink::control(const std::string& request, std::string* error) {
    // "key=value" lines: room=NAME, then reset=yes, or any of volume,
    // mute and delay-ms.
    RoomControl room;
    unsigned fields = 0;
    std::string name;
    bool reset = false;
    size_t at = 0;
    while (at < request.size()) {
        const size_t end = std::min(request.find('\n', at), request.size());
        const std::string line = request.substr(at, end - at);
        at = end + 1;
        const size_t equals = line.find('=');
        const std::string key = line.substr(0, equals);
        const std::string value = equals == std::string::npos ? "" : line.substr(equals + 1);
        char* rest = nullptr;
        if (key == "room") {
            name = value;
        } else if (key == "reset" && value == "yes") {
            reset = true;
        } else if (key == "volume") {
            fields |= RtpSender::kRoomVolume;
            room.volume = std::strtod(value.c_str(), &rest);
            if (value.empty() || *rest != '\0' || !(room.volume >= 0 && room.volume <= 4)) {
                *error = "volume: '" + value + "' is not a gain from 0 to 4";
                return -EINVAL;
            }
        } else if (key == "mute" && (value == "on" || value == "off")) {
            fields |= RtpSender::kRoomMute;
            room.muted = value == "on";
        } else if (key == "delay-ms" && value == "own") {
            fields |= RtpSender::kRoomDelay;
            room.has_delay = false;
        } else if (key == "delay-ms") {
            const unsigned long ms = std::strtoul(value.c_str(), &rest, 10);
            if (value.empty() || *rest != '\0' || ms > 9999) {
                *error = "delay-ms: '" + value + "' is not 0 to 9999 ms, nor own";
                return -EINVAL;
            }
            fields |= RtpSender::kRoomDelay;
            room.has_delay = true;
            room.delay_ms = static_cast<uint16_t>(ms);
        } else if (!line.empty()) {
            *error = "rtp sink: no request '" + line + "' (room=NAME, then volume=, mute=, " +
                     "delay-ms= or reset=yes)";
            return -EINVAL;
        }
    }
    // A room is named as it names itself (its member-name, an RTCP CNAME),
    // in the characters `audioctl list groups` shows it by.
    if (name.empty() || name.size() >= sizeof room.name ||
        name.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
                               "._-/:@") != std::string::npos) {
        *error = "room: '" + name + "' is not a room's name (1 to 63 of A-Z a-z 0-9 . _ - / : @)";
        return -EINVAL;
    }
    if (reset) {
        if (!sender_->release_room(name)) {
            *error = "nothing was asked of room '" + name + "'";
            return -ENOENT;
        }
        return 0;
    }
    std::memcpy(room.name, name.data(), name.size());
    room.name_size = static_cast<uint8_t>(name.size());
    if (std::string why = sender_->control_room(room, fields); !why.empty()) {
        *error = why;
        return -ENOSPC;
    }
    return 0;
}

SdpDescription RtpSink::session(const audiod_device_config& config) const {
    SdpDescription d;
    d.session_name = options_.session_name;
    d.origin_address = local_address_for(destination_).text;
    d.session_id = static_cast<uint64_t>(time(nullptr)) ^ sender_->ssrc();
    d.session_version = static_cast<uint64_t>(time(nullptr));
    d.address = destination_.host;
    d.ipv6 = destination_.ipv6;
    d.ttl = static_cast<uint8_t>(options_.ttl);
    d.port = destination_.port;
    d.payload_type = options_.payload_type;
    d.encoding = options_.encoding;
    d.rate = options_.clock_rate;
    d.channels = config.channels;
    d.ptime_ms = 1000.0 * options_.packet_frames / options_.clock_rate;
    d.fec = options_.fec;
    if (options_.aes67) {
        // RFC 7273 §4.8: IEEE1588-2008, the grandmaster and its domain, or
        // "traceable" (to TAI) when the grandmaster is not named.
        // (Appended piece by piece: GCC 12 warns of a false overlap in
        // operator+ here.)
        std::string refclk = "ptp=IEEE1588-2008:";
        refclk.append(options_.ptp_grandmaster);
        if (options_.ptp_grandmaster != "traceable") {
            refclk.append(":").append(std::to_string(options_.ptp_domain));
        }
        d.ts_refclk = std::move(refclk);
        d.mediaclk_direct = options_.mediaclk_offset;
    }
    return d;
}

std::unique_ptr<RtpSink> RtpSink::open(const OpenRequest& request, audiod_open_info* info,
                                       std::string* error, int* code) {
    const audiod_device_config& config = request.config;
    std::string message;
    auto options = parse_send_options(config, message);
    if (!options) {
        return refuse(error, code, message, -EINVAL);
    }
    auto sink = std::make_unique<RtpSink>(config);
    sink->options_ = *options;
    auto destination = resolve_endpoint(options->destination, options->port, message);
    if (!destination) {
        return refuse(error, code, "rtp sink option destination: " + message, -EINVAL);
    }
    sink->destination_ = *destination;
    sink->sender_ =
        RtpSender::create(*options, config.rate, config.channels, *destination, message);
    if (sink->sender_ == nullptr) {
        return refuse(error, code, message, -EIO);
    }
    const std::string sdp = write_sdp(sink->session(config));
    if (!options->sdp_file.empty()) {
        if (!write_file_atomically(options->sdp_file, sdp, message)) {
            return refuse(error, code, message, -EIO);
        }
        sink->wrote_sdp_file_ = true;
    }
    if (options->announce) {
        sink->announcer_ =
            SapAnnouncer::start(*destination, options->sap_address, options->ttl, sdp, message);
        if (sink->announcer_ == nullptr) {
            return refuse(error, code, "cannot announce by SAP: " + message, -EIO);
        }
    }
    info->format = sink->sender_->sample_format();
    info->latency_frames = sink->sender_->latency_frames();
    return sink;
}

RtpSink::~RtpSink() {
    announcer_.reset(); // sends the SAP deletion
    if (wrote_sdp_file_) {
        unlink(options_.sdp_file.c_str()); // the session no longer exists
    }
}

size_t RtpSink::describe(char* text, size_t size) const {
    const SenderStats s = sender_->stats();
    const bool v6 = destination_.ipv6;
    const int n = std::snprintf(
        text, size,
        "destination=%s%s%s:%u\npayload=%s\nptime-ms=%g\nssrc=%u\npackets=%llu\noctets=%llu\n"
        "dropped=%llu\nrefused=%llu\nresent=%llu\nencode-errors=%llu\nlast-error=%s\nsending=%s\n"
        "announced=%llu\n",
        v6 ? "[" : "", destination_.host.c_str(), v6 ? "]" : "", destination_.port,
        encoding_name(options_.encoding), options_.ptime_ms, sender_->ssrc(),
        static_cast<unsigned long long>(s.packets), static_cast<unsigned long long>(s.octets),
        static_cast<unsigned long long>(s.dropped), static_cast<unsigned long long>(s.refused),
        static_cast<unsigned long long>(s.resent), static_cast<unsigned long long>(s.encode_errors),
        s.last_error != 0 ? strerrorname_np(s.last_error) : "none", s.silent ? "no" : "yes",
        static_cast<unsigned long long>(announcer_ ? announcer_->announcements() : 0));
    size_t used = n < 0 ? 0 : std::min(static_cast<size_t>(n), size > 0 ? size - 1 : 0);
    if (const PtpFollower* ptp = sender_->ptp(); ptp != nullptr) {
        used = append_details(text, size, used, ptp->describe());
    }
    used = append_details(text, size, used, sender_->describe_controls());
    // The receivers that report back: a group's rooms.
    return used + (used + 1 < size ? sender_->describe_receivers(text + used, size - used) : 0);
}

} // namespace

const audiod_sink_ops* sink_ops() {
    return &sink_table<RtpSink, kSinkOptions>;
}

} // namespace audiod::rtp
