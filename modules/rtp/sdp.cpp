#include "sdp.h"

#include "audiod/audiod.h"

#include <charconv>
#include <cstdio>
#include <cstdlib>
#include <vector>

namespace audiod::rtp {

namespace {

std::string format_ptime(double ms) {
    char text[32];
    std::snprintf(text, sizeof text, "%g", ms);
    return text;
}

// Splits "a b c" at spaces (runs of them count once).
std::vector<std::string_view> words(std::string_view line) {
    std::vector<std::string_view> out;
    size_t at = 0;
    while (at < line.size()) {
        const size_t end = std::min(line.find(' ', at), line.size());
        if (end > at) {
            out.push_back(line.substr(at, end - at));
        }
        at = end + 1;
    }
    return out;
}

template <class T>
bool parse_number(std::string_view text, T& value) {
    const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
    return ec == std::errc{} && end == text.data() + text.size();
}

// "OPUS/48000/2" -> encoding, rate, channels (1 if absent).
bool parse_rtpmap(std::string_view spec, SdpDescription& d, std::string& error) {
    const size_t slash = spec.find('/');
    if (slash == std::string_view::npos) {
        error = "rtpmap has no clock rate";
        return false;
    }
    const auto encoding = parse_encoding(spec.substr(0, slash));
    if (!encoding) {
        error = "unsupported encoding '" + std::string(spec.substr(0, slash)) +
                "' (audiod plays OPUS, L16 and L24)";
        return false;
    }
    d.encoding = *encoding;
    std::string_view rest = spec.substr(slash + 1);
    const size_t second = rest.find('/');
    d.channels = 1;
    if (second != std::string_view::npos) {
        if (!parse_number(rest.substr(second + 1), d.channels)) {
            error = "bad channel count in rtpmap";
            return false;
        }
        rest = rest.substr(0, second);
    }
    if (!parse_number(rest, d.rate)) {
        error = "bad clock rate in rtpmap";
        return false;
    }
    return true;
}

// "stereo=1; sprop-stereo=1; useinbandfec=1"
void parse_fmtp(std::string_view params, SdpDescription& d) {
    size_t at = 0;
    while (at < params.size()) {
        size_t end = params.find(';', at);
        if (end == std::string_view::npos) {
            end = params.size();
        }
        std::string_view item = params.substr(at, end - at);
        while (!item.empty() && item.front() == ' ') {
            item.remove_prefix(1);
        }
        if (item == "sprop-stereo=0") {
            d.channels = 1;
        } else if (item == "sprop-stereo=1") {
            d.channels = 2;
        } else if (item == "useinbandfec=1") {
            d.fec = true;
        }
        at = end + 1;
    }
}

} // namespace

std::string write_sdp(const SdpDescription& d) {
    const char* family = d.ipv6 ? "IP6" : "IP4";
    std::string c = d.address;
    const int first_octet = std::atoi(d.address.c_str());
    if (!d.ipv6 && first_octet >= 224 && first_octet <= 239) {
        c += "/" + std::to_string(d.ttl); // an IPv4 group carries its TTL (RFC 4566 §5.7)
    }
    const std::string pt = std::to_string(d.payload_type);
    const uint32_t sdp_channels = d.encoding == Encoding::opus ? 2 : d.channels;
    std::string out;
    out += "v=0\n";
    out += "o=- " + std::to_string(d.session_id) + " " + std::to_string(d.session_version) +
           " IN " + family + " " + d.origin_address + "\n";
    out += "s=" + d.session_name + "\n";
    out += std::string("c=IN ") + family + " " + c + "\n";
    out += "t=0 0\n";
    out += "a=recvonly\n";
    out += "m=audio " + std::to_string(d.port) + " RTP/AVP " + pt + "\n";
    out += "a=rtpmap:" + pt + " " + encoding_name(d.encoding) + "/" + std::to_string(d.rate) + "/" +
           std::to_string(sdp_channels) + "\n";
    if (d.encoding == Encoding::opus) {
        // RFC 7587 §7: always "/2"; the real channel count is sprop-stereo.
        const char* stereo = d.channels == 2 ? "1" : "0";
        out += "a=fmtp:" + pt + " stereo=" + stereo + "; sprop-stereo=" + stereo;
        out += d.fec ? "; useinbandfec=1\n" : "\n";
    }
    if (d.ptime_ms > 0) {
        out += "a=ptime:" + format_ptime(d.ptime_ms) + "\n";
    }
    if (!d.ts_refclk.empty()) {
        out += "a=ts-refclk:" + d.ts_refclk + "\n";
    }
    if (d.mediaclk_direct) {
        out += "a=mediaclk:direct=" + std::to_string(*d.mediaclk_direct) + "\n";
    }
    return out;
}

std::optional<SdpDescription> parse_sdp(std::string_view text, std::string& error) {
    if (text.size() > kMaxSdpSize) {
        error = "session description larger than " + std::to_string(kMaxSdpSize) + " bytes";
        return std::nullopt;
    }
    SdpDescription d;
    bool version = false;
    bool media = false;      // inside the chosen m=audio section
    bool past_media = false; // a later m= section: ignored
    bool rtpmap = false;
    std::string media_address;
    size_t at = 0;
    while (at < text.size()) {
        size_t end = text.find('\n', at);
        if (end == std::string_view::npos) {
            end = text.size();
        }
        std::string_view line = text.substr(at, end - at);
        at = end + 1;
        if (!line.empty() && line.back() == '\r') {
            line.remove_suffix(1);
        }
        if (line.size() < 2 || line[1] != '=') {
            if (line.empty()) {
                continue;
            }
            error = "a line is not TYPE=VALUE";
            return std::nullopt;
        }
        const char type = line[0];
        const std::string_view value = line.substr(2);
        if (!version) {
            if (line != "v=0") {
                error = "does not start with v=0";
                return std::nullopt;
            }
            version = true;
            continue;
        }
        if (past_media) {
            continue;
        }
        const auto w = words(value);
        if (type == 'm') {
            if (media) {
                past_media = true;
                continue;
            }
            if (w.size() < 4 || w[0] != "audio" || w[2] != "RTP/AVP") {
                continue; // not an RTP audio section
            }
            uint32_t pt = 0;
            if (!parse_number(w[1], d.port) || d.port == 0 || !parse_number(w[3], pt) || pt > 127) {
                error = "bad m=audio line";
                return std::nullopt;
            }
            d.payload_type = static_cast<uint8_t>(pt);
            media = true;
            if (pt == 10 || pt == 11) { // RFC 3551's static L16 types
                d.encoding = Encoding::l16;
                d.rate = 44100;
                d.channels = pt == 10 ? 2 : 1;
                rtpmap = true;
            }
        } else if (type == 's' && !media) {
            d.session_name = std::string(value.substr(0, 255));
        } else if (type == 'o' && w.size() == 6) {
            d.origin_address = std::string(w[5]);
            (void)parse_number(w[1], d.session_id);
            (void)parse_number(w[2], d.session_version);
        } else if (type == 'c') {
            if (w.size() != 3 || w[0] != "IN" || (w[1] != "IP4" && w[1] != "IP6")) {
                error = "bad c= line";
                return std::nullopt;
            }
            std::string_view address = w[2].substr(0, w[2].find('/'));
            if (media || media_address.empty()) {
                media_address = std::string(address);
                d.ipv6 = w[1] == "IP6";
            }
        } else if (type == 'a' &&
                   (value.rfind("ts-refclk:", 0) == 0 || value.rfind("mediaclk:", 0) == 0)) {
            // RFC 7273: at session level, or at media level (which wins).
            if (value.rfind("ts-refclk:", 0) == 0) {
                d.ts_refclk = std::string(value.substr(10, 200));
            } else if (value.rfind("mediaclk:direct=", 0) == 0) {
                uint64_t offset = 0;
                const std::string_view number = value.substr(16, value.find(' ') - 16);
                if (!parse_number(number, offset) || offset > UINT32_MAX) {
                    error = "bad a=mediaclk:direct offset";
                    return std::nullopt;
                }
                d.mediaclk_direct = static_cast<uint32_t>(offset);
            } else {
                d.mediaclk_direct.reset(); // another media clock: timed by reports
            }
        } else if (type == 'a' && media) {
            const std::string prefix_map = "rtpmap:" + std::to_string(d.payload_type) + " ";
            const std::string prefix_fmtp = "fmtp:" + std::to_string(d.payload_type) + " ";
            if (value.rfind(prefix_map, 0) == 0) {
                if (!parse_rtpmap(value.substr(prefix_map.size()), d, error)) {
                    return std::nullopt;
                }
                rtpmap = true;
            } else if (value.rfind(prefix_fmtp, 0) == 0) {
                parse_fmtp(value.substr(prefix_fmtp.size()), d);
            } else if (value.rfind("ptime:", 0) == 0) {
                (void)parse_number(value.substr(6), d.ptime_ms);
            }
        }
    }
    if (!version) {
        error = "empty: does not start with v=0";
        return std::nullopt;
    }
    if (!media) {
        error = "no RTP audio stream (m=audio ... RTP/AVP)";
        return std::nullopt;
    }
    if (!rtpmap) {
        error = "payload type " + std::to_string(d.payload_type) + " has no a=rtpmap";
        return std::nullopt;
    }
    if (d.encoding == Encoding::opus && d.rate != 48000) {
        error = "an Opus stream's clock is 48000 Hz (RFC 7587), not " + std::to_string(d.rate);
        return std::nullopt;
    }
    if (d.rate < AUDIOD_MIN_RATE || d.rate > AUDIOD_MAX_RATE || d.channels < 1 ||
        d.channels > AUDIOD_MAX_CHANNELS) {
        error = "unsupported rate or channel count";
        return std::nullopt;
    }
    if (media_address.empty()) {
        error = "no connection address (c=)";
        return std::nullopt;
    }
    d.address = media_address;
    return d;
}

} // namespace audiod::rtp
