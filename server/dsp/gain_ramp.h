// A gain that moves to its target linearly over a fixed number of frames, so
// that volume changes never click. When the ramp ends the gain is exactly the
// target (not target plus rounding), which keeps unity gain bit-exact.
// Thread: rt (owned by one RT thread).
#pragma once

#include <cstdint>

namespace audiod {

class GainRamp {
public:
    explicit GainRamp(float gain = 1.0f) noexcept
        : current_(gain)
        , target_(gain) {}

    void set_target(float target, uint32_t ramp_frames) noexcept {
        target_ = target;
        frames_left_ = current_ == target ? 0 : ramp_frames;
        if (frames_left_ == 0) {
            current_ = target;
        }
    }

    // Jumps without a ramp (for a stream that has not played yet).
    void reset(float gain) noexcept {
        current_ = target_ = gain;
        frames_left_ = 0;
    }

    [[nodiscard]] bool ramping() const noexcept { return frames_left_ > 0; }
    [[nodiscard]] float current() const noexcept { return current_; }
    [[nodiscard]] uint32_t frames_left() const noexcept { return frames_left_; }

    // The per-frame step for the ramp's remaining frames.
    [[nodiscard]] float step() const noexcept {
        return frames_left_ == 0 ? 0.0f : (target_ - current_) / static_cast<float>(frames_left_);
    }

    // Moves the ramp on by `frames` (which may pass its end).
    void advance(uint32_t frames) noexcept {
        if (frames >= frames_left_) {
            current_ = target_;
            frames_left_ = 0;
            return;
        }
        current_ += step() * static_cast<float>(frames);
        frames_left_ -= frames;
    }

private:
    float current_;
    float target_;
    uint32_t frames_left_ = 0;
};

} // namespace audiod
