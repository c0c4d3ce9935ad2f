#include "os/memory_lock.h"

#include <atomic>
#include <sys/mman.h>

namespace audiod {

namespace {
std::atomic<uint64_t> g_locked{0};
std::atomic<uint64_t> g_refused{0};
} // namespace

void lock_memory(const void* address, size_t bytes) noexcept {
    if (bytes == 0) {
        return;
    }
    if (::mlock(address, bytes) == 0) {
        g_locked.fetch_add(1, std::memory_order_relaxed);
    } else {
        g_refused.fetch_add(1, std::memory_order_relaxed);
    }
}

void unlock_memory(const void* address, size_t bytes) noexcept {
    if (bytes != 0) {
        ::munlock(address, bytes);
    }
}

std::string memory_lock_status() {
    const uint64_t refused = g_refused.load();
    if (refused == 0) {
        return "locked";
    }
    return "not locked (" + std::to_string(refused) + " of " +
           std::to_string(refused + g_locked.load()) + " regions refused: raise RLIMIT_MEMLOCK)";
}

} // namespace audiod
