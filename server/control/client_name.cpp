#include "control/client_name.h"

#include <cstdint>

namespace audiod {

namespace {

// Length of the valid UTF-8 sequence at text[i], or 0 if it is not one.
size_t utf8_sequence(const std::string& text, size_t i) {
    const auto byte = [&](size_t k) { return static_cast<unsigned char>(text[k]); };
    const unsigned char lead = byte(i);
    size_t length = 0;
    uint32_t min = 0;
    if (lead < 0x80) {
        return 1;
    } else if ((lead & 0xE0) == 0xC0) {
        length = 2;
        min = 0x80;
    } else if ((lead & 0xF0) == 0xE0) {
        length = 3;
        min = 0x800;
    } else if ((lead & 0xF8) == 0xF0) {
        length = 4;
        min = 0x10000;
    } else {
        return 0;
    }
    if (i + length > text.size()) {
        return 0;
    }
    uint32_t code = lead & (0x7F >> length);
    for (size_t k = 1; k < length; ++k) {
        if ((byte(i + k) & 0xC0) != 0x80) {
            return 0;
        }
        code = (code << 6) | (byte(i + k) & 0x3F);
    }
    const bool surrogate = code >= 0xD800 && code <= 0xDFFF;
    return code < min || code > 0x10FFFF || surrogate ? 0 : length;
}

} // namespace

std::string sanitize_name(const std::string& raw) {
    std::string out;
    for (size_t i = 0; i < raw.size();) {
        const size_t length = utf8_sequence(raw, i);
        const unsigned char c = static_cast<unsigned char>(raw[i]);
        std::string piece = length == 0 || c < 0x20 || c == 0x7f ? "?" : raw.substr(i, length);
        if (out.size() + piece.size() > 64) {
            break;
        }
        out += piece;
        i += length == 0 ? 1 : length;
    }
    return out;
}

} // namespace audiod
