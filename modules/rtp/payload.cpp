#include "payload.h"

#include <strings.h>

namespace audiod::rtp {

const char* encoding_name(Encoding encoding) noexcept {
    switch (encoding) {
    case Encoding::opus:
        return "OPUS";
    case Encoding::l16:
        return "L16";
    case Encoding::l24:
        return "L24";
    }
    return "?";
}

std::optional<Encoding> parse_encoding(std::string_view name) noexcept {
    for (const Encoding e : {Encoding::opus, Encoding::l16, Encoding::l24}) {
        const std::string_view known = encoding_name(e);
        if (name.size() == known.size() &&
            strncasecmp(name.data(), known.data(), known.size()) == 0) {
            return e;
        }
    }
    return std::nullopt;
}

size_t pcm_sample_bytes(Encoding encoding) noexcept {
    switch (encoding) {
    case Encoding::l16:
        return 2;
    case Encoding::l24:
        return 3;
    case Encoding::opus:
        break;
    }
    return 0;
}

void pack_l16(const int16_t* in, size_t count, uint8_t* out) noexcept {
    for (size_t i = 0; i < count; ++i) {
        const auto v = static_cast<uint16_t>(in[i]);
        out[2 * i] = static_cast<uint8_t>(v >> 8);
        out[2 * i + 1] = static_cast<uint8_t>(v);
    }
}

void pack_l24(const int32_t* in, size_t count, uint8_t* out) noexcept {
    for (size_t i = 0; i < count; ++i) {
        const auto v = static_cast<uint32_t>(in[i]);
        out[3 * i] = static_cast<uint8_t>(v >> 24);
        out[3 * i + 1] = static_cast<uint8_t>(v >> 16);
        out[3 * i + 2] = static_cast<uint8_t>(v >> 8);
    }
}

void unpack_l16(const uint8_t* in, size_t count, int16_t* out) noexcept {
    for (size_t i = 0; i < count; ++i) {
        out[i] = static_cast<int16_t>((in[2 * i] << 8) | in[2 * i + 1]);
    }
}

void unpack_l24(const uint8_t* in, size_t count, int32_t* out) noexcept {
    for (size_t i = 0; i < count; ++i) {
        const uint32_t v = (uint32_t{in[3 * i]} << 24) | (uint32_t{in[3 * i + 1]} << 16) |
                           (uint32_t{in[3 * i + 2]} << 8);
        out[i] = static_cast<int32_t>(v);
    }
}

} // namespace audiod::rtp
