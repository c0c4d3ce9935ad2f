#include "self_timing.h"

#include <algorithm>

namespace audiod::client {

namespace {

// How long after a cycle's start to look: its mix and the write of the
// server's position take microseconds, a late start of the cycle (timer
// or scheduling) takes more; a quarter of the period still leaves the
// writer most of a cycle to refill in.
constexpr uint64_t kMarginDivisor = 4;
// Cycles past the one expected before the writer stops timing itself.
constexpr uint64_t kLateCycles = 3;

} // namespace

uint64_t self_timed_wake_ns(const SelfTimingInput& in) noexcept {
    if (in.cycle_time_ns == 0 || in.cycle_period_ns == 0 || in.rate == 0 || in.capacity == 0) {
        return 0;
    }
    // Frames of this ring that one cycle takes (a resampled stream's differ
    // from the sink's quantum), rounded: the period is whole nanoseconds.
    const uint64_t per_cycle =
        std::max<uint64_t>(1, (in.cycle_period_ns * in.rate + 500'000'000) / 1'000'000'000);
    const uint64_t queued = std::min(in.queued, in.capacity);
    const uint64_t free = in.capacity - queued;
    // The server's own rules (device_cycle.cpp): the cycle after which the
    // free frames reach the threshold, or the queue falls below two cycles'
    // worth, whichever comes first.
    const uint64_t to_threshold =
        in.wake_threshold > free ? (in.wake_threshold - free + per_cycle - 1) / per_cycle : 1;
    const uint64_t to_low = queued >= 2 * per_cycle ? (queued - 2 * per_cycle) / per_cycle + 1 : 1;
    const uint64_t cycles = std::max<uint64_t>(1, std::min(to_threshold, to_low));

    const uint64_t margin = in.cycle_period_ns / kMarginDivisor;
    const uint64_t give_up = in.cycle_time_ns + (cycles + kLateCycles) * in.cycle_period_ns;
    if (in.now_ns >= give_up) {
        return 0;
    }
    uint64_t at = in.cycle_time_ns + cycles * in.cycle_period_ns + margin;
    if (at <= in.now_ns) {
        // The cycle is late: look again a margin on, not a period (waiting
        // a period would spend a cycle of the writer's slack), until the
        // give-up.
        const uint64_t step = std::max<uint64_t>(margin, 1);
        at += ((in.now_ns - at) / step + 1) * step;
    }
    return at;
}

} // namespace audiod::client
