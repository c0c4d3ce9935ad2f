#include "dsp/convert_kernels.h"

#include "dsp/mix_kernels.h"

#include <cmath>
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

void remix(const float* in, size_t frames, const ChannelMix& mix, float* out) noexcept {
    const uint32_t ins = mix.in;
    const uint32_t outs = mix.out;
    if (mix.identity) {
        std::memcpy(out, in, frames * ins * sizeof(float));
        return;
    }
    for (size_t f = 0; f < frames; ++f) {
        for (uint32_t o = 0; o < outs; ++o) {
            float sum = 0.0f;
            for (uint32_t c = 0; c < ins; ++c) {
                sum += mix.coefficient[o][c] * in[f * ins + c];
            }
            out[f * outs + o] = sum;
        }
    }
}

namespace {

// Round to nearest, ties to even, and saturate to [-(2^(bits-1)), 2^(bits-1)-1].
inline int32_t to_int(float x, float scale, float max) noexcept {
    const float scaled = x * scale;
    const float clamped = scaled < -max - 1.0f ? -max - 1.0f : (scaled > max ? max : scaled);
    return static_cast<int32_t>(std::nearbyint(clamped));
}

} // namespace

void encode_samples(SampleFormat format, const float* in, size_t samples, uint8_t* out) noexcept {
    switch (format) {
    case SampleFormat::u8:
        for (size_t i = 0; i < samples; ++i) {
            out[i] = static_cast<uint8_t>(to_int(in[i], 128.0f, 127.0f) + 128);
        }
        break;
    case SampleFormat::s16le:
        bus_to_s16(reinterpret_cast<int16_t*>(out), in, samples);
        break;
    case SampleFormat::s24le:
    case SampleFormat::s24_3le: {
        const size_t width = format == SampleFormat::s24le ? 4 : 3;
        for (size_t i = 0; i < samples; ++i) {
            const int32_t v = to_int(in[i], 8388608.0f, 8388607.0f);
            const uint32_t u = static_cast<uint32_t>(v);
            uint8_t* p = out + i * width;
            p[0] = static_cast<uint8_t>(u);
            p[1] = static_cast<uint8_t>(u >> 8);
            p[2] = static_cast<uint8_t>(u >> 16);
            if (width == 4) {
                p[3] = static_cast<uint8_t>(v < 0 ? 0xff : 0x00); // sign in the container
            }
        }
        break;
    }
    case SampleFormat::s32le:
        bus_to_s32(reinterpret_cast<int32_t*>(out), in, samples);
        break;
    case SampleFormat::f32le:
        bus_to_f32(reinterpret_cast<float*>(out), in, samples);
        break;
    case SampleFormat::invalid:
        break;
    }
}

} // namespace audiod::mix
