// Counters of forbidden calls made on a thread inside an RtScope (see
// server/os/rt_scope.h), filled by the replacements in rt_hooks.cpp.
#pragma once

#include <atomic>
#include <cstdint>

namespace audiod::test {

struct RtViolations {
    std::atomic<uint64_t> allocations{0};
    std::atomic<uint64_t> frees{0};
    std::atomic<uint64_t> locks{0};

    [[nodiscard]] uint64_t total() const { return allocations + frees + locks; }
    void reset() {
        allocations = 0;
        frees = 0;
        locks = 0;
    }
};

RtViolations& rt_violations();

} // namespace audiod::test
