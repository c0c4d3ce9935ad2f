#include "device/rt_support.h"

#include "dsp/mix_kernels.h"

#include <algorithm>
#include <ctime>
#include <unistd.h>

namespace audiod {

void wake_rt(int fd) noexcept {
    const uint64_t one = 1;
    [[maybe_unused]] const ssize_t r = ::write(fd, &one, sizeof one);
}

uint64_t monotonic_ns_rt() noexcept {
    timespec now{};
    ::clock_gettime(CLOCK_MONOTONIC, &now);
    return static_cast<uint64_t>(now.tv_sec) * 1'000'000'000u + static_cast<uint64_t>(now.tv_nsec);
}

void apply_gain_rt(float* frames, uint32_t count, unsigned channels, GainRamp& gain) noexcept {
    const size_t samples = size_t{count} * channels;
    if (gain.ramping()) {
        const uint32_t ramp = std::min(count, gain.frames_left());
        mix::scale_ramp(frames, ramp, channels, gain.current(), gain.step());
        gain.advance(ramp);
        mix::scale(frames + size_t{ramp} * channels, samples - size_t{ramp} * channels,
                   gain.current());
    } else if (gain.current() != 1.0f) {
        mix::scale(frames, samples, gain.current());
    }
}

} // namespace audiod
