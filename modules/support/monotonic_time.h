// CLOCK_MONOTONIC in nanoseconds, for the modules' deadlines.
// Thread: any (rt included: clock_gettime is a vDSO call).
#pragma once

#include <cstdint>
#include <ctime>

namespace audiod {

inline int64_t monotonic_ns() noexcept {
    timespec t{};
    clock_gettime(CLOCK_MONOTONIC, &t);
    return int64_t{t.tv_sec} * 1'000'000'000 + t.tv_nsec;
}

} // namespace audiod
