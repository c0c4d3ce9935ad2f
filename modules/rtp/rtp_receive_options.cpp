#include "rtp_receive_options.h"

#include "audiod/audiod.h"
#include "device_options.h"
#include "sdp.h"

#include <algorithm>
#include <arpa/inet.h>
#include <cerrno>
#include <charconv>
#include <cstring>
#include <fstream>

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
    const DeviceOptions options(config);
    if (auto refusal = options.check_keys(kSourceOptions, "the rtp source")) {
        error = std::move(*refusal);
        return std::nullopt;
    }
    RtpReceiveOptions o;
    uint64_t number = 0;
    const auto bad = [&](const char* key, const std::string& why) {
        error = std::string("rtp source option ") + key + ": " + why;
        return std::nullopt;
    };
    if (const auto path = options.get("sdp-file")) {
        std::ifstream in(*path);
        if (!in) {
            return bad("sdp-file", "cannot read " + *path + ": " + std::strerror(errno));
        }
        std::string text(kMaxSdpSize + 1, '\0'); // one byte more than allowed: too big is refused
        in.read(text.data(), static_cast<std::streamsize>(text.size()));
        text.resize(static_cast<size_t>(in.gcount()));
        std::string why;
        const auto sdp = parse_sdp(text, why);
        if (!sdp) {
            return bad("sdp-file", *path + ": " + why);
        }
        o.address = sdp->address;
        o.port = sdp->port;
        o.encoding = sdp->encoding;
        o.payload_type = sdp->payload_type;
        o.clock_rate = sdp->rate;
        o.channels = sdp->channels;
    }
    if (const auto v = options.get("address")) {
        o.address = *v;
    }
    if (const auto v = options.get("port")) {
        if (!parse_uint(*v, 65535, number) || number == 0) {
            return bad("port", "'" + *v + "' is not a port number");
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
        if (!parse_uint(*v, 127, number)) {
            return bad("payload-type", "'" + *v + "' is not 0-127");
        }
        o.payload_type = static_cast<uint8_t>(number);
    }
    if (const auto v = options.get("clock-rate")) {
        if (!parse_uint(*v, AUDIOD_MAX_RATE, number) || number < AUDIOD_MIN_RATE) {
            return bad("clock-rate", "'" + *v + "' is not a rate in Hz");
        }
        o.clock_rate = static_cast<uint32_t>(number);
    }
    if (const auto v = options.get("stream-channels")) {
        if (!parse_uint(*v, AUDIOD_MAX_CHANNELS, number) || number == 0) {
            return bad("stream-channels", "'" + *v + "' is not 1-8");
        }
        o.channels = static_cast<uint32_t>(number);
    }
    if (o.encoding == Encoding::opus) {
        if (o.clock_rate != 48000) {
            return bad("clock-rate", "Opus's RTP clock is always 48000 Hz");
        }
        if (o.channels > 2) {
            return bad("stream-channels", "Opus carries 1 or 2 channels here");
        }
    }
    if (const auto v = options.get("latency-ms")) {
        if (!parse_uint(*v, 2000, number) || number == 0) {
            return bad("latency-ms", "'" + *v + "' is not 1-2000 ms");
        }
        o.latency_ms = static_cast<uint32_t>(number);
    }
    if (const auto v = options.get("allow")) {
        size_t at = 0;
        while (at <= v->size()) {
            const size_t end = std::min(v->find(',', at), v->size());
            std::string item = v->substr(at, end - at);
            item.erase(0, item.find_first_not_of(' '));
            item.erase(item.find_last_not_of(' ') + 1);
            const auto prefix = parse_prefix(item);
            if (!prefix) {
                return bad("allow", "'" + item + "' is not an address or address/prefix");
            }
            o.allow.push_back(*prefix);
            at = end + 1;
        }
    }
    return o;
}

} // namespace audiod::rtp
