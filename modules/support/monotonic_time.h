// The clocks in nanoseconds: CLOCK_MONOTONIC for the modules' deadlines,
// and the others a module relates to it (the wall clock a network stream
// is stamped on, the raw clock a test measures by).
// Thread: any (rt included: clock_gettime is a vDSO call).
#pragma once

#include <cstdint>
#include <ctime>

namespace audiod {

inline int64_t clock_ns(clockid_t id) noexcept {
    timespec t{};
    clock_gettime(id, &t);
    return int64_t{t.tv_sec} * 1'000'000'000 + t.tv_nsec;
}

inline int64_t monotonic_ns() noexcept {
    return clock_ns(CLOCK_MONOTONIC);
}

// How far the wall clock (CLOCK_REALTIME) is ahead of CLOCK_MONOTONIC now:
// a monotonic time plus this is the wall time, for stamping and reading
// RTCP reports.
inline int64_t wall_minus_monotonic_ns() noexcept {
    return clock_ns(CLOCK_REALTIME) - clock_ns(CLOCK_MONOTONIC);
}

// How far CLOCK_TAI is ahead of CLOCK_MONOTONIC now: PTP's timescale where
// ptp4l and phc2sys keep the clocks (rtp/media_clock.h).
inline int64_t tai_minus_monotonic_ns() noexcept {
    return clock_ns(CLOCK_TAI) - clock_ns(CLOCK_MONOTONIC);
}

// How far CLOCK_TAI is ahead of the wall clock: the kernel's TAI offset
// (37 s where the time daemon sets it, else 0).
inline int64_t tai_minus_wall_ns() noexcept {
    return clock_ns(CLOCK_TAI) - clock_ns(CLOCK_REALTIME);
}

} // namespace audiod
