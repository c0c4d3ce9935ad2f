#include "common/clock_follower.h"

#include <algorithm>
#include <cmath>

namespace audiod {

namespace {

// de/dt = rate * (drift - correction), correction = kp*e + ki*∫e dt: a
// second-order loop with natural frequency w and damping 1 when
// rate*kp = 2w and rate*ki = w². w = 2π/30 s.
constexpr double kOmega = 2 * M_PI / 30.0;
constexpr double kSmoothingSeconds = 1.0;

} // namespace

ClockFollower::ClockFollower(uint32_t rate, double target) noexcept
    : rate_(rate)
    , target_(target)
    , center_(target)
    , dead_band_(kDeadBandMs * rate / 1000)
    , nominal_center_(target)
    , max_shift_(kDeadBandMs * rate / 1000) {}

void ClockFollower::set_packet(double frames) noexcept {
    center_ = nominal_center_ = target_ + frames / 2;
    max_shift_ = std::max(kDeadBandMs * rate_ / 1000, frames / 2);
}

void ClockFollower::set_uncertainty(double frames) noexcept {
    dead_band_ = std::max(dead_band_, frames / 2);
    max_shift_ = std::max(max_shift_, frames);
}

double ClockFollower::update(double fill, double elapsed) noexcept {
    const double dt = elapsed / rate_;
    const double error = fill - center_;
    if (!primed_) {
        error_ = error;
        primed_ = true;
    } else {
        error_ += (error - error_) * std::min(1.0, dt / kSmoothingSeconds);
    }
    if (watched_ < kWarmUpSeconds) {
        watched_ += dt;
        if (watched_ < kWarmUpSeconds) {
            return ratio_;
        }
        const double settled = center_ + error_;
        center_ = std::clamp(settled, nominal_center_ - max_shift_, nominal_center_ + max_shift_);
        error_ = settled - center_;
    }
    // Inside the band, nothing to correct; outside, only the excess.
    const double excess = error_ > dead_band_    ? error_ - dead_band_
                          : error_ < -dead_band_ ? error_ + dead_band_
                                                 : 0.0;
    const double kp = 2 * kOmega / rate_;
    const double ki = kOmega * kOmega / rate_;
    integral_ += excess * dt;
    // The integral alone may not exceed the correction's range (no wind-up).
    integral_ = std::clamp(integral_, -kMaxCorrection / ki, kMaxCorrection / ki);
    const double correction =
        std::clamp(kp * excess + ki * integral_, -kMaxCorrection, kMaxCorrection);
    const double step = kMaxSlewPerSecond * dt;
    ratio_ = std::clamp(1 + correction, ratio_ - step, ratio_ + step);
    return ratio_;
}

void ClockFollower::reset(bool forget) noexcept {
    primed_ = false;
    watched_ = 0;
    center_ = nominal_center_;
    if (forget) {
        integral_ = 0;
        ratio_ = 1;
    }
}

} // namespace audiod
