// Locking the memory the RT path touches (stream rings, mix buffers) into
// RAM, so that a cycle never waits for a page to come back from swap.
// Allowed for root or within RLIMIT_MEMLOCK; when refused, audio still
// works and `audioctl info` says memory is not locked. Thread: any.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

namespace audiod {

// Locks [address, address + bytes); remembers whether it succeeded.
void lock_memory(const void* address, size_t bytes) noexcept;
void unlock_memory(const void* address, size_t bytes) noexcept;

// "locked" if every request succeeded, else what happened.
std::string memory_lock_status();

} // namespace audiod
