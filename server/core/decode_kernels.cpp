#include "decode_kernels.h"

#include "mix_kernels.h"

#include <cstring>

namespace audiod::mix {

namespace {

inline float sanitize(float s) noexcept {
    s = s < kMaxFloatSample ? s : (s == s ? kMaxFloatSample : 0.0f);
    return s > -kMaxFloatSample ? s : -kMaxFloatSample;
}

template <SampleFormat F>
inline float read_sample(const uint8_t* p) noexcept {
    if constexpr (F == SampleFormat::u8) {
        return static_cast<float>(static_cast<int>(p[0]) - 128) * (1.0f / 128.0f);
    } else if constexpr (F == SampleFormat::s16le) {
        int16_t v;
        std::memcpy(&v, p, 2);
        return static_cast<float>(v) * kS16Scale;
    } else if constexpr (F == SampleFormat::s24le) {
        uint32_t v;
        std::memcpy(&v, p, 4);
        const int32_t s = static_cast<int32_t>(v << 8) >> 8; // sign-extend bit 23
        return static_cast<float>(s) * (1.0f / 8388608.0f);
    } else if constexpr (F == SampleFormat::s24_3le) {
        const uint32_t v = uint32_t{p[0]} | uint32_t{p[1]} << 8 | uint32_t{p[2]} << 16;
        const int32_t s = static_cast<int32_t>(v << 8) >> 8;
        return static_cast<float>(s) * (1.0f / 8388608.0f);
    } else if constexpr (F == SampleFormat::s32le) {
        int32_t v;
        std::memcpy(&v, p, 4);
        return static_cast<float>(v) * kS32Scale;
    } else {
        float v;
        std::memcpy(&v, p, 4);
        return sanitize(v);
    }
}

template <SampleFormat F, unsigned Bytes>
void decode(const uint8_t* src, size_t frames, const ChannelMix& mix, float* out) noexcept {
    const uint32_t in = mix.in;
    const uint32_t outs = mix.out;
    if (mix.identity) {
        const size_t samples = frames * in;
        for (size_t i = 0; i < samples; ++i) {
            out[i] = read_sample<F>(src + i * Bytes);
        }
        return;
    }
    float frame[kMaxChannels];
    for (size_t f = 0; f < frames; ++f) {
        for (uint32_t c = 0; c < in; ++c) {
            frame[c] = read_sample<F>(src + (f * in + c) * Bytes);
        }
        for (uint32_t o = 0; o < outs; ++o) {
            float sum = 0.0f;
            for (uint32_t c = 0; c < in; ++c) {
                sum += mix.coefficient[o][c] * frame[c];
            }
            out[f * outs + o] = sum;
        }
    }
}

} // namespace

void decode_frames(SampleFormat format, const uint8_t* src, size_t frames, const ChannelMix& mix,
                   float* out) noexcept {
    switch (format) {
    case SampleFormat::u8:
        decode<SampleFormat::u8, 1>(src, frames, mix, out);
        break;
    case SampleFormat::s16le:
        decode<SampleFormat::s16le, 2>(src, frames, mix, out);
        break;
    case SampleFormat::s24le:
        decode<SampleFormat::s24le, 4>(src, frames, mix, out);
        break;
    case SampleFormat::s24_3le:
        decode<SampleFormat::s24_3le, 3>(src, frames, mix, out);
        break;
    case SampleFormat::s32le:
        decode<SampleFormat::s32le, 4>(src, frames, mix, out);
        break;
    case SampleFormat::f32le:
        decode<SampleFormat::f32le, 4>(src, frames, mix, out);
        break;
    case SampleFormat::invalid:
        break;
    }
}

} // namespace audiod::mix
