#include "rtp_send_options.h"

#include "audiod/audiod.h"
#include "device_options.h"
#include "rtp_option_reader.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <climits>
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

// "00-1D-C1-FF-FE-12-34-56": a PTP clock identity as RFC 7273 writes it.
bool is_clock_identity(const std::string& text) {
    if (text.size() != 23) {
        return false;
    }
    for (size_t i = 0; i < text.size(); ++i) {
        const bool dash = i % 3 == 2;
        if (dash ? text[i] != '-' : std::isxdigit(static_cast<unsigned char>(text[i])) == 0) {
            return false;
        }
    }
    return true;
}

std::string host_name() {
    char name[256] = "localhost";
    gethostname(name, sizeof name - 1);
    return name;
}

} // namespace

std::optional<RtpSendOptions> parse_send_options(const audiod_device_config& config,
                                                 std::string& error) {
    OptionReader read(config, "rtp sink", error);
    if (!read.keys_known(kSinkOptions)) {
        return std::nullopt;
    }
    RtpSendOptions o;
    o.destination = read.get("destination").value_or(o.destination);
    // RTCP takes the next port, so the RTP port is even by convention
    // (RFC 3550 §11) and below 65535.
    if (!read.boolean("aes67", o.aes67)) {
        return std::nullopt;
    }
    if (o.aes67) {
        o.encoding = Encoding::l24; // AES67's payload, unless L16 is asked for
    }
    if (!read.number("port", 1, 65534, "a port number below 65535", o.port) ||
        !read.payload(o.encoding) ||
        !read.number("payload-type", 96, 127, "a dynamic payload type (96-127)", o.payload_type) ||
        !read.number("mtu", 256, 65507, "a packet size from 256 to 65507", o.mtu)) {
        return std::nullopt;
    }
    // The RTP clock: Opus's is always 48000 Hz (RFC 7587), PCM's the sink's
    // rate. An Opus sink within 1 % of it sends a clock off by the
    // difference.
    o.clock_rate = o.encoding == Encoding::opus ? 48000 : config.rate;
    if (std::abs(double(config.rate) / o.clock_rate - 1) > 0.01) {
        return read.refuse("payload", "an Opus sink runs at 48000 Hz (RFC 7587's clock); "
                                      "set rate = 48000, not " +
                                          std::to_string(config.rate));
    }
    if (o.encoding == Encoding::opus && config.channels > 2) {
        return read.refuse("payload",
                           "Opus carries 1 or 2 channels, not " + std::to_string(config.channels));
    }
    if (const auto v = read.get("ptime")) {
        char* end = nullptr;
        o.ptime_ms = std::strtod(v->c_str(), &end);
        if (end == v->c_str() || *end != '\0' || !(o.ptime_ms > 0) || o.ptime_ms > 100) {
            return read.refuse("ptime", "'" + *v + "' is not a packet duration in milliseconds");
        }
        if (o.encoding == Encoding::opus &&
            std::find(std::begin(kOpusPtimes), std::end(kOpusPtimes), o.ptime_ms) ==
                std::end(kOpusPtimes)) {
            return read.refuse("ptime", "Opus packets last 2.5, 5, 10 or 20 ms, not " + *v);
        }
    }
    if (o.aes67 && o.encoding == Encoding::opus) {
        return read.refuse("payload", "AES67 carries L24 or L16, not Opus");
    }
    if (o.aes67 && o.ptime_ms == 0) {
        o.ptime_ms = 1; // AES67's packet time, which every AES67 receiver takes
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
                return read.refuse("mtu", "even 1 ms of audio does not fit " +
                                              std::to_string(o.mtu) + " bytes");
            }
        }
    }
    o.packet_frames = frames_of(o.ptime_ms);
    if (o.packet_frames == 0) {
        return read.refuse("ptime", "shorter than one frame");
    }
    if (o.encoding != Encoding::opus && 12 + o.packet_frames * frame_bytes > o.mtu) {
        return read.refuse("ptime", std::to_string(o.ptime_ms) + " ms of this audio is " +
                                        std::to_string(12 + o.packet_frames * frame_bytes) +
                                        " bytes a packet, over the " + std::to_string(o.mtu) +
                                        "-byte mtu: shorten ptime or raise mtu");
    }
    o.bitrate = config.channels == 1 ? 64000 : 128000;
    if (const auto v = read.get("bitrate"); v && !parse_bitrate(*v, o.bitrate)) {
        return read.refuse("bitrate", "'" + *v + "' is not 6000-510000 bits/s (or 6k-510k)");
    }
    if (!read.boolean("fec", o.fec)) {
        return std::nullopt;
    }
    if (o.fec && o.encoding != Encoding::opus) {
        return read.refuse("fec", "in-band FEC is Opus's; L16 and L24 have none");
    }
    if (!read.number("expected-loss", 0, 100, "a percentage", o.expected_loss) ||
        !read.boolean("resend", o.resend) || !read.number("ttl", 0, 255, "0-255", o.ttl)) {
        return std::nullopt;
    }
    o.sdp_file = read.get("sdp-file").value_or("");
    if (!read.boolean("announce", o.announce)) {
        return std::nullopt;
    }
    if (const auto v = read.get("sap-address")) {
        // Checked as an address when the sink starts, as destination is.
        if (v->empty()) {
            return read.refuse("sap-address", "is empty");
        }
        if (!o.announce) {
            return read.refuse("sap-address", "is set but announce is not true");
        }
        o.sap_address = *v;
    }
    if (!read.boolean("suppress-silence", o.suppress_silence)) {
        return std::nullopt;
    }
    // (Their defaults may be written out: a sink's stated defaults are.)
    for (const auto& [key, fallback] :
         {std::pair{"ptp-grandmaster", "traceable"}, std::pair{"ptp-domain", "0"},
          std::pair{"mediaclk-offset", "0"}}) {
        if (read.get(key).value_or(fallback) != fallback && !o.aes67) {
            return read.refuse(key, "is set but aes67 is not true");
        }
    }
    if (const auto v = read.get("ptp-grandmaster")) {
        if (!is_clock_identity(*v) && *v != "traceable") {
            return read.refuse("ptp-grandmaster",
                               "'" + *v +
                                   "' is not a clock identity (eight hex bytes joined by '-', "
                                   "00-1D-C1-FF-FE-12-34-56) nor traceable");
        }
        o.ptp_grandmaster = *v;
    }
    if (!read.number("ptp-domain", 0, 127, "a PTP domain (0-127)", o.ptp_domain) ||
        !read.number("mediaclk-offset", 0, UINT32_MAX, "an RTP time (0-4294967295)",
                     o.mediaclk_offset)) {
        return std::nullopt;
    }
    if (const auto v = read.get("ptp4l")) {
        if (v->empty() || v->size() > 107) {
            return read.refuse("ptp4l", "must be a socket's path of 1 to 107 bytes");
        }
        o.ptp4l = *v;
    }
    o.session_name = read.get("session-name")
                         .value_or(std::string("audiod ") + config.name + " on " + host_name());
    if (o.session_name.find('\n') != std::string::npos || o.session_name.size() > 200) {
        return read.refuse("session-name", "must be one line of at most 200 bytes");
    }
    return o;
}

} // namespace audiod::rtp
