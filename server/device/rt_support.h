// Small steps every RT cycle takes, shared by the device's cycle and its
// stream transfers. Thread: rt (callable anywhere; none allocates, locks
// or blocks).
#pragma once

#include "dsp/gain_ramp.h"

#include <cstdint>

namespace audiod {

// Signals an eventfd. A failure can only mean the counter is about to
// overflow, i.e. the reader is long gone: the wake-up is dropped.
void wake_rt(int fd) noexcept;

// CLOCK_MONOTONIC in ns (the clients' steady_clock), through the vDSO: no
// system call.
[[nodiscard]] uint64_t monotonic_ns_rt() noexcept;

// Scales `count` frames in place by `gain`, advancing its ramp; unity
// gain leaves them untouched (bit-exact).
void apply_gain_rt(float* frames, uint32_t count, unsigned channels, GainRamp& gain) noexcept;

} // namespace audiod
