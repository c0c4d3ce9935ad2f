#include "common/drift_resampler.h"

#include "common/cubic_interpolation.h"

#include <algorithm>
#include <cmath>
#include <cstring>

namespace audiod {

DriftResampler::DriftResampler(uint32_t channels, uint32_t capacity)
    : channels_(channels)
    , capacity_(capacity + kBefore)
    , fifo_(size_t{capacity_} * channels) {
    clear();
}

void DriftResampler::clear() noexcept {
    // One frame of silence before the first input, so that the first
    // output (at that input) has the frame before it.
    std::fill_n(fifo_.begin(), channels_, 0.0f);
    frames_ = kBefore;
    position_ = kBefore;
}

double DriftResampler::skip(double frames) noexcept {
    const double moved = std::clamp(frames, 0.0, buffered());
    position_ += moved;
    return moved;
}

double DriftResampler::buffered() const noexcept {
    return std::max(0.0, static_cast<double>(frames_) - position_);
}

uint32_t DriftResampler::push(const float* frames, uint32_t count) noexcept {
    compact();
    const uint32_t taken = std::min(count, capacity_ - frames_);
    std::memcpy(fifo_.data() + size_t{frames_} * channels_, frames,
                size_t{taken} * channels_ * sizeof(float));
    frames_ += taken;
    return taken;
}

uint32_t DriftResampler::pull(float* out, uint32_t max_frames, double ratio) noexcept {
    uint32_t produced = 0;
    while (produced < max_frames) {
        const auto at = static_cast<uint32_t>(position_);
        if (at + kAfter >= frames_) {
            break;
        }
        const double t = position_ - at;
        const float* y0 = fifo_.data() + size_t{at - kBefore} * channels_;
        const float* y1 = y0 + channels_;
        const float* y2 = y1 + channels_;
        const float* y3 = y2 + channels_;
        float* o = out + size_t{produced} * channels_;
        for (uint32_t c = 0; c < channels_; ++c) {
            o[c] = catmull_rom(y0[c], y1[c], y2[c], y3[c], t);
        }
        position_ += ratio;
        ++produced;
    }
    return produced;
}

void DriftResampler::compact() noexcept {
    // Keep the frame before the position; everything older is done with.
    const auto at = static_cast<uint32_t>(std::min<double>(position_, frames_));
    if (at <= kBefore) {
        return;
    }
    const uint32_t drop = at - kBefore;
    std::memmove(fifo_.data(), fifo_.data() + size_t{drop} * channels_,
                 size_t{frames_ - drop} * channels_ * sizeof(float));
    frames_ -= drop;
    position_ -= drop;
}

} // namespace audiod
