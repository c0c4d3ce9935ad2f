// When a self-timed writer looks at its ring again (ring_layout.h,
// kClientFlagSelfTimed): just after the server's cycle that will have
// freed what it waits for, timed from the last cycle the server published,
// so that the server need not signal it every cycle.
// Thread: any; a pure function of its arguments.
#pragma once

#include <cstdint>

namespace audiod::client {

struct SelfTimingInput {
    uint64_t now_ns = 0;        // CLOCK_MONOTONIC
    uint64_t cycle_time_ns = 0; // the ring header's: start of the last cycle that took frames
    uint64_t cycle_period_ns = 0;
    uint32_t rate = 0; // the stream's frames per second
    uint64_t queued = 0;
    uint64_t capacity = 0;
    uint64_t wake_threshold = 0; // frames free the writer asked to be woken for
};

// The CLOCK_MONOTONIC time to look again at, or 0: wait for the server's
// signal alone (no cycle published yet, or none for several periods: the
// stream is paused, moving or prebuffering, or the server has stopped;
// it still signals once the queue is about to run dry).
[[nodiscard]] uint64_t self_timed_wake_ns(const SelfTimingInput& in) noexcept;

} // namespace audiod::client
