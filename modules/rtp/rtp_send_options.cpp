#include "rtp_send_options.h"

#include "audiod/audiod.h"
#include "device_options.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <unistd.h>

namespace audiod::rtp {

namespace {

// Opus frame durations for low latency (RFC 6716 §2.1.4 also allows 40
// and 60 ms, which add latency for nothing here).
constexpr double kOpusPtimes[] = {2.5, 5, 10, 20};
constexpr double kDefaultOpusPtime = 10;
// For linear PCM: the longest of these whose packet fits the MTU.
constexpr double kPcmPtimes[] = {20, 10, 5, 4, 2.5, 2, 1};

// "96000", "96k".
bool parse_bitrate(std::string text, uint32_t& value) {
    uint64_t scale = 1;
    if (!text.empty() && (text.back() == 'k' || text.back() == 'K')) {
        scale = 1000;
        text.pop_back();
    }
    uint64_t v = 0;
    if (!parse_uint(text, 1'000'000, v)) {
        return false;
    }
    value = static_cast<uint32_t>(v * scale);
    return value >= 6000 && value <= 510000; // libopus's range
}

std::string host_name() {
    char name[256] = "localhost";
    gethostname(name, sizeof name - 1);
    return name;
}

} // namespace

std::optional<RtpSendOptions> parse_send_options(const audiod_device_config& config,
                                                 std::string& error) {
    const DeviceOptions options(config);
    if (auto refusal = options.check_keys(kSinkOptions, "the rtp sink")) {
        error = std::move(*refusal);
        return std::nullopt;
    }
    RtpSendOptions o;
    uint64_t number = 0;
    const auto bad = [&](const char* key, const std::string& why) {
        error = std::string("rtp sink option ") + key + ": " + why;
        return std::nullopt;
    };
    if (const auto v = options.get("destination")) {
        o.destination = *v;
    }
    if (const auto v = options.get("port")) {
        // RTCP takes the next port, so the RTP port is even by convention
        // (RFC 3550 §11) and below 65535.
        if (!parse_uint(*v, 65534, number) || number == 0) {
            return bad("port", "'" + *v + "' is not a port number below 65535");
        }
        o.port = static_cast<uint16_t>(number);
    }
    if (const auto v = options.get("payload")) {
        const auto encoding = parse_encoding(*v);
        if (!encoding) {
            return bad("payload", "'" + *v + "' is not opus, l16 or l24");
        }
        o.encoding = *encoding;
    }
    if (const auto v = options.get("payload-type")) {
        if (!parse_uint(*v, 127, number) || number < 96) {
            return bad("payload-type", "'" + *v + "' is not a dynamic payload type (96-127)");
        }
        o.payload_type = static_cast<uint8_t>(number);
    }
    if (const auto v = options.get("mtu")) {
        if (!parse_uint(*v, 65507, number) || number < 256) {
            return bad("mtu", "'" + *v + "' is not a packet size from 256 to 65507");
        }
        o.mtu = static_cast<uint32_t>(number);
    }
    o.clock_rate = o.encoding == Encoding::opus ? 48000 : config.rate;
    if (const auto v = options.get("clock-rate")) {
        if (!parse_uint(*v, AUDIOD_MAX_RATE, number) || number < AUDIOD_MIN_RATE) {
            return bad("clock-rate", "'" + *v + "' is not a rate in Hz");
        }
        o.clock_rate = static_cast<uint32_t>(number);
    }
    if (o.encoding == Encoding::opus && o.clock_rate != 48000) {
        return bad("clock-rate", "Opus's RTP clock is always 48000 Hz (RFC 7587)");
    }
    if (std::abs(double(config.rate) / o.clock_rate - 1) > 0.01) {
        return bad("payload", o.encoding == Encoding::opus
                                  ? "an Opus sink runs at 48000 Hz (RFC 7587's clock); set rate "
                                    "= 48000, not " +
                                        std::to_string(config.rate)
                                  : "the sink's rate " + std::to_string(config.rate) +
                                        " is more than 1 % from clock-rate " +
                                        std::to_string(o.clock_rate));
    }
    if (o.encoding == Encoding::opus && config.channels > 2) {
        return bad("payload",
                   "Opus carries 1 or 2 channels, not " + std::to_string(config.channels));
    }
    if (const auto v = options.get("ptime")) {
        char* end = nullptr;
        o.ptime_ms = std::strtod(v->c_str(), &end);
        if (end == v->c_str() || *end != '\0' || !(o.ptime_ms > 0) || o.ptime_ms > 100) {
            return bad("ptime", "'" + *v + "' is not a packet duration in milliseconds");
        }
        if (o.encoding == Encoding::opus &&
            std::find(std::begin(kOpusPtimes), std::end(kOpusPtimes), o.ptime_ms) ==
                std::end(kOpusPtimes)) {
            return bad("ptime", "Opus packets last 2.5, 5, 10 or 20 ms, not " + *v);
        }
    }
    const size_t frame_bytes = pcm_sample_bytes(o.encoding) * config.channels;
    const auto frames_of = [&](double ms) {
        return static_cast<uint32_t>(std::floor(o.clock_rate * ms / 1000.0 + 1e-9));
    };
    if (o.ptime_ms == 0) {
        o.ptime_ms = kDefaultOpusPtime;
        if (o.encoding != Encoding::opus) {
            o.ptime_ms = 0;
            for (const double ms : kPcmPtimes) {
                if (12 + frames_of(ms) * frame_bytes <= o.mtu) {
                    o.ptime_ms = ms;
                    break;
                }
            }
            if (o.ptime_ms == 0) {
                return bad("mtu",
                           "even 1 ms of audio does not fit " + std::to_string(o.mtu) + " bytes");
            }
        }
    }
    o.packet_frames = frames_of(o.ptime_ms);
    if (o.packet_frames == 0) {
        return bad("ptime", "shorter than one frame");
    }
    if (o.encoding != Encoding::opus && 12 + o.packet_frames * frame_bytes > o.mtu) {
        return bad("ptime", std::to_string(o.ptime_ms) + " ms of this audio is " +
                                std::to_string(12 + o.packet_frames * frame_bytes) +
                                " bytes a packet, over the " + std::to_string(o.mtu) +
                                "-byte mtu: shorten ptime or raise mtu");
    }
    o.bitrate = config.channels == 1 ? 64000 : 128000;
    if (const auto v = options.get("bitrate")) {
        if (!parse_bitrate(*v, o.bitrate)) {
            return bad("bitrate", "'" + *v + "' is not 6000-510000 bits/s (or 6k-510k)");
        }
    }
    if (const auto v = options.get("fec"); v && !parse_bool(*v, o.fec)) {
        return bad("fec", "'" + *v + "' is not true or false");
    }
    if (o.fec && o.encoding != Encoding::opus) {
        return bad("fec", "in-band FEC is Opus's; L16 and L24 have none");
    }
    if (const auto v = options.get("expected-loss")) {
        if (!parse_uint(*v, 100, number)) {
            return bad("expected-loss", "'" + *v + "' is not a percentage");
        }
        o.expected_loss = static_cast<uint32_t>(number);
    }
    if (const auto v = options.get("resend"); v && !parse_bool(*v, o.resend)) {
        return bad("resend", "'" + *v + "' is not true or false");
    }
    if (const auto v = options.get("ttl")) {
        if (!parse_uint(*v, 255, number)) {
            return bad("ttl", "'" + *v + "' is not 0-255");
        }
        o.ttl = static_cast<int>(number);
    }
    if (const auto v = options.get("sdp-file")) {
        o.sdp_file = *v;
    }
    if (const auto v = options.get("announce"); v && !parse_bool(*v, o.announce)) {
        return bad("announce", "'" + *v + "' is not true or false");
    }
    if (const auto v = options.get("sap-address")) {
        // Checked as an address when the sink starts, as destination is.
        if (v->empty()) {
            return bad("sap-address", "is empty");
        }
        if (!o.announce) {
            return bad("sap-address", "is set but announce is not true");
        }
        o.sap_address = *v;
    }
    if (const auto v = options.get("suppress-silence"); v && !parse_bool(*v, o.suppress_silence)) {
        return bad("suppress-silence", "'" + *v + "' is not true or false");
    }
    o.session_name = options.get("session-name")
                         .value_or(std::string("audiod ") + config.name + " on " + host_name());
    if (o.session_name.find('\n') != std::string::npos || o.session_name.size() > 200) {
        return bad("session-name", "must be one line of at most 200 bytes");
    }
    return o;
}

} // namespace audiod::rtp
