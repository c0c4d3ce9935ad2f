#include "rtp_receive_options.h"

#include "audiod/audiod.h"
#include "device_options.h"
#include "rtp_option_reader.h"
#include "sdp.h"

#include <algorithm>
#include <arpa/inet.h>
#include <cerrno>
#include <charconv>
#include <climits>
#include <cstdint>
#include <cstring>
#include <fstream>
#include <unistd.h>

namespace audiod::rtp {

std::optional<AddressPrefix> parse_prefix(const std::string& text) {
    AddressPrefix p;
    const size_t slash = text.find('/');
    const std::string host = text.substr(0, slash);
    if (inet_pton(AF_INET, host.c_str(), p.bytes) == 1) {
        p.bits = 32;
    } else if (inet_pton(AF_INET6, host.c_str(), p.bytes) == 1) {
        p.ipv6 = true;
        p.bits = 128;
    } else {
        return std::nullopt;
    }
    if (slash != std::string::npos) {
        uint64_t bits = 0;
        if (!parse_uint(text.substr(slash + 1), p.bits, bits)) {
            return std::nullopt;
        }
        p.bits = static_cast<uint32_t>(bits);
    }
    return p;
}

bool allowed(const std::vector<AddressPrefix>& allow, const uint8_t* address, bool ipv6) noexcept {
    if (allow.empty()) {
        return true;
    }
    static constexpr uint8_t kMapped[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};
    if (ipv6 && std::memcmp(address, kMapped, 12) == 0) {
        address += 12; // ::ffff:a.b.c.d is a.b.c.d
        ipv6 = false;
    }
    for (const AddressPrefix& p : allow) {
        if (p.ipv6 != ipv6) {
            continue;
        }
        const uint32_t whole = p.bits / 8;
        const uint32_t rest = p.bits % 8;
        if (std::memcmp(address, p.bytes, whole) != 0) {
            continue;
        }
        const auto mask = static_cast<uint8_t>(0xff << (8 - rest));
        if (rest == 0 || ((address[whole] ^ p.bytes[whole]) & mask) == 0) {
            return true;
        }
    }
    return false;
}

std::optional<RtpReceiveOptions> parse_receive_options(const audiod_device_config& config,
                                                       std::string& error) {
    OptionReader read(config, "rtp source", error);
    if (!read.keys_known(kSourceOptions)) {
        return std::nullopt;
    }
    RtpReceiveOptions o;
    if (const auto path = read.get("sdp-file")) {
        std::ifstream in(*path);
        if (!in) {
            return read.refuse("sdp-file", "cannot read " + *path + ": " + std::strerror(errno));
        }
        std::string text(kMaxSdpSize + 1, '\0'); // one byte more than allowed: too big is refused
        in.read(text.data(), static_cast<std::streamsize>(text.size()));
        text.resize(static_cast<size_t>(in.gcount()));
        std::string why;
        const auto sdp = parse_sdp(text, why);
        if (!sdp) {
            return read.refuse("sdp-file", *path + ": " + why);
        }
        o.address = sdp->address;
        o.port = sdp->port;
        o.encoding = sdp->encoding;
        o.payload_type = sdp->payload_type;
        o.clock_rate = sdp->rate;
        o.channels = sdp->channels;
        o.direct_clock = sdp->mediaclk_direct.has_value();
        o.mediaclk_offset = sdp->mediaclk_direct.value_or(0);
    }
    o.address = read.get("address").value_or(o.address);
    if (!read.number("port", 1, 65535, "a port number", o.port) || !read.payload(o.encoding) ||
        !read.number("payload-type", 0, 127, "0-127", o.payload_type) ||
        !read.number("clock-rate", AUDIOD_MIN_RATE, AUDIOD_MAX_RATE, "a rate in Hz",
                     o.clock_rate) ||
        !read.number("stream-channels", 1, AUDIOD_MAX_CHANNELS, "1-8", o.channels)) {
        return std::nullopt;
    }
    if (o.encoding == Encoding::opus) {
        if (o.clock_rate != 48000) {
            return read.refuse("clock-rate", "Opus's RTP clock is always 48000 Hz");
        }
        if (o.channels > 2) {
            return read.refuse("stream-channels", "Opus carries 1 or 2 channels here");
        }
    }
    if (!read.number("latency-ms", 1, 2000, "1-2000 ms", o.latency_ms) ||
        !read.number("link-offset-ms", 1, 10000, "1-10000 ms", o.link_offset_ms) ||
        !read.number("delay-ms", 0, 9999, "0-9999 ms", o.delay_ms)) {
        return std::nullopt;
    }
    o.timed = read.get("link-offset-ms").has_value();
    if (o.timed && o.link_offset_ms <= o.latency_ms) {
        return read.refuse("link-offset-ms",
                           "must be more than latency-ms (" + std::to_string(o.latency_ms) +
                               " ms): a frame must have come through the jitter buffer before "
                               "it is due");
    }
    if (o.delay_ms > 0 && !o.timed) {
        return read.refuse("delay-ms", "takes link-offset-ms: a room is played earlier than the "
                                       "others only when it plays at the stamped times");
    }
    if (o.timed && o.link_offset_ms - o.latency_ms <= o.delay_ms) {
        return read.refuse("delay-ms", "must be less than link-offset-ms less latency-ms (" +
                                           std::to_string(o.link_offset_ms - o.latency_ms) +
                                           " ms): a frame played earlier must still have come "
                                           "through the jitter buffer");
    }
    if (const auto v = read.get("ptp4l")) {
        if (!o.timed) {
            return read.refuse("ptp4l", "takes link-offset-ms: only a room that plays at the "
                                        "stamped times reads a clock");
        }
        if (v->empty() || v->size() > 107) {
            return read.refuse("ptp4l", "must be a socket's path of 1 to 107 bytes");
        }
        o.ptp4l = *v;
    }
    if (const auto v = read.get("media-clock")) {
        if (*v != "reports" && *v != "direct") {
            return read.refuse("media-clock", "'" + *v + "' is not reports or direct");
        }
        o.direct_clock = *v == "direct";
    }
    if (!read.number("mediaclk-offset", 0, UINT32_MAX, "an RTP time (0-4294967295)",
                     o.mediaclk_offset)) {
        return std::nullopt;
    }
    char host[64] = "localhost";
    gethostname(host, sizeof host - 1);
    o.member_name = read.get("member-name").value_or(std::string(host) + "/" + config.name);
    if (o.member_name.empty() || o.member_name.size() > 63 ||
        o.member_name.find('\n') != std::string::npos) {
        if (read.get("member-name")) {
            return read.refuse("member-name", "must be one line of 1 to 63 bytes");
        }
        o.member_name = o.member_name.substr(0, 63); // a long host name: cut
    }
    if (const auto v = read.get("reference-offset-us")) {
        int64_t us = 0;
        const auto [end, ec] = std::from_chars(v->data(), v->data() + v->size(), us);
        if (ec != std::errc{} || end != v->data() + v->size() || us < -10'000'000 ||
            us > 10'000'000) {
            return read.refuse("reference-offset-us",
                               "'" + *v + "' is not a whole number from -10000000 to 10000000");
        }
        o.reference_offset_us = us;
    }
    if (const auto v = read.get("allow")) {
        size_t at = 0;
        while (at <= v->size()) {
            const size_t end = std::min(v->find(',', at), v->size());
            std::string item = v->substr(at, end - at);
            item.erase(0, item.find_first_not_of(' '));
            item.erase(item.find_last_not_of(' ') + 1);
            const auto prefix = parse_prefix(item);
            if (!prefix) {
                return read.refuse("allow", "'" + item + "' is not an address or address/prefix");
            }
            o.allow.push_back(*prefix);
            at = end + 1;
        }
    }
    return o;
}

} // namespace audiod::rtp
