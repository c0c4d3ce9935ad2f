#include "dsp/channel_mix.h"

#include <algorithm>

namespace audiod {

namespace {

enum Position : uint8_t { FL, FR, FC, LFE, RL, RR, RC, SL, SR, kPositions };

constexpr float kMinus3dB = 0.70710678f;

// The standard map of each channel count (see the header).
const Position* layout(uint32_t channels) noexcept {
    static const Position k1[] = {FC};
    static const Position k2[] = {FL, FR};
    static const Position k3[] = {FL, FR, FC};
    static const Position k4[] = {FL, FR, RL, RR};
    static const Position k5[] = {FL, FR, FC, RL, RR};
    static const Position k6[] = {FL, FR, FC, LFE, RL, RR};
    static const Position k7[] = {FL, FR, FC, LFE, RC, SL, SR};
    static const Position k8[] = {FL, FR, FC, LFE, RL, RR, SL, SR};
    static const Position* const all[] = {k1, k2, k3, k4, k5, k6, k7, k8};
    return all[channels - 1];
}

bool is_left(Position p) noexcept {
    return p == FL || p == RL || p == SL;
}

} // namespace

ChannelMix make_channel_mix(uint32_t in_channels, uint32_t out_channels) noexcept {
    ChannelMix mix;
    in_channels = std::clamp<uint32_t>(in_channels, 1, kMaxChannels);
    out_channels = std::clamp<uint32_t>(out_channels, 1, kMaxChannels);
    mix.in = in_channels;
    mix.out = out_channels;
    mix.identity = in_channels == out_channels;
    if (mix.identity) {
        for (uint32_t c = 0; c < in_channels; ++c) {
            mix.coefficient[c][c] = 1.0f;
        }
        return mix;
    }
    const Position* in = layout(in_channels);
    const Position* out = layout(out_channels);
    int where[kPositions];
    std::fill(where, where + kPositions, -1);
    for (uint32_t o = 0; o < out_channels; ++o) {
        where[out[o]] = static_cast<int>(o);
    }
    const auto add = [&](Position to, uint32_t from, float gain) {
        if (where[to] >= 0) {
            mix.coefficient[where[to]][from] += gain;
        }
    };

    if (out_channels == 1) {
        uint32_t counted = 0;
        for (uint32_t i = 0; i < in_channels; ++i) {
            counted += in[i] != LFE ? 1 : 0;
        }
        for (uint32_t i = 0; i < in_channels; ++i) {
            if (in[i] != LFE) {
                mix.coefficient[0][i] = 1.0f / static_cast<float>(counted);
            }
        }
        return mix;
    }
    for (uint32_t i = 0; i < in_channels; ++i) {
        const Position p = in[i];
        if (where[p] >= 0 && !(in_channels == 1 && where[FL] >= 0)) {
            add(p, i, 1.0f);
            continue;
        }
        switch (p) {
        case FC: // mono, or a centre the output lacks
            if (in_channels == 1) {
                add(FL, i, 1.0f);
                add(FR, i, 1.0f);
            } else {
                add(FL, i, kMinus3dB);
                add(FR, i, kMinus3dB);
            }
            break;
        case LFE:
            break;
        case RC:
            if (where[RL] >= 0 && where[RR] >= 0) {
                add(RL, i, kMinus3dB);
                add(RR, i, kMinus3dB);
            } else {
                add(FL, i, kMinus3dB * kMinus3dB);
                add(FR, i, kMinus3dB * kMinus3dB);
            }
            break;
        default: { // a rear or side channel
            const bool left = is_left(p);
            const Position rear = left ? RL : RR;
            const Position side = left ? SL : SR;
            if (where[rear] >= 0) {
                add(rear, i, 1.0f);
            } else if (where[side] >= 0) {
                add(side, i, 1.0f);
            } else {
                add(left ? FL : FR, i, kMinus3dB);
            }
            break;
        }
        }
    }
    for (uint32_t o = 0; o < out_channels; ++o) {
        float sum = 0.0f;
        for (uint32_t i = 0; i < in_channels; ++i) {
            sum += mix.coefficient[o][i];
        }
        if (sum > 1.0f) {
            for (uint32_t i = 0; i < in_channels; ++i) {
                mix.coefficient[o][i] /= sum;
            }
        }
    }
    return mix;
}

} // namespace audiod
