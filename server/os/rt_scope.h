// Marks the extent of a real-time cycle on the current thread.
//
// Production code only sets and clears a thread-local flag (two stores per
// cycle). The RT-safety test links replacements for malloc/free/operator new
// and pthread_mutex_lock that fail the test when they are called while the
// flag is set, which turns "the RT thread never allocates or locks" from a
// promise into a checked property.
#pragma once

namespace audiod {

inline thread_local bool t_in_rt_cycle = false;

class RtScope {
public:
    RtScope() noexcept { t_in_rt_cycle = true; }
    ~RtScope() { t_in_rt_cycle = false; }
    RtScope(const RtScope&) = delete;
    RtScope& operator=(const RtScope&) = delete;
};

[[nodiscard]] inline bool in_rt_cycle() noexcept {
    return t_in_rt_cycle;
}

} // namespace audiod
