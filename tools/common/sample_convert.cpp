#include "sample_convert.h"

#include <cstdint>
#include <cstring>

namespace audiod {

void convert_to_f32(SampleFormat format, const void* src, float* dst, size_t samples) noexcept {
    const auto* bytes = static_cast<const uint8_t*>(src);
    for (size_t i = 0; i < samples; ++i) {
        switch (format) {
        case SampleFormat::u8:
            dst[i] = (static_cast<float>(bytes[i]) - 128.0f) / 128.0f;
            break;
        case SampleFormat::s16le: {
            int16_t v;
            std::memcpy(&v, bytes + 2 * i, 2);
            dst[i] = static_cast<float>(v) / 32768.0f;
            break;
        }
        case SampleFormat::s24le: {
            uint32_t raw;
            std::memcpy(&raw, bytes + 4 * i, 4);
            // Sign-extend the low 24 bits; the container's top byte is ignored.
            const int32_t v = static_cast<int32_t>(raw << 8) >> 8;
            dst[i] = static_cast<float>(v) / 8388608.0f;
            break;
        }
        case SampleFormat::s24_3le: {
            const uint8_t* p = bytes + 3 * i;
            const uint32_t raw = uint32_t{p[0]} | uint32_t{p[1]} << 8 | uint32_t{p[2]} << 16;
            const int32_t v = static_cast<int32_t>(raw << 8) >> 8;
            dst[i] = static_cast<float>(v) / 8388608.0f;
            break;
        }
        case SampleFormat::s32le: {
            int32_t v;
            std::memcpy(&v, bytes + 4 * i, 4);
            dst[i] = static_cast<float>(static_cast<double>(v) / 2147483648.0);
            break;
        }
        case SampleFormat::f32le:
            std::memcpy(dst + i, bytes + 4 * i, 4);
            break;
        case SampleFormat::invalid:
            dst[i] = 0.0f;
            break;
        }
    }
}

} // namespace audiod
