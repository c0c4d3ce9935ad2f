#include "pulse/shared_memory.h"

#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>

namespace audiod::pulse {

namespace {

uint32_t word_at(std::span<const uint8_t> bytes, size_t at) {
    return uint32_t{bytes[at]} << 24 | uint32_t{bytes[at + 1]} << 16 |
           uint32_t{bytes[at + 2]} << 8 | bytes[at + 3];
}

} // namespace

std::optional<SharedBlock> read_shared_block(std::span<const uint8_t> payload) {
    if (payload.size() != 16) {
        return std::nullopt;
    }
    return SharedBlock{word_at(payload, 0), word_at(payload, 4), word_at(payload, 8),
                       word_at(payload, 12)};
}

SharedPools::~SharedPools() {
    for (const auto& [id, pool] : pools_) {
        ::munmap(const_cast<uint8_t*>(pool.base), pool.size);
    }
}

std::string SharedPools::add(uint32_t pool_id, UniqueFd memfd) {
    if (pools_.size() >= kMaxPools) {
        return "more than " + std::to_string(kMaxPools) + " memory pools";
    }
    if (pools_.count(pool_id) != 0) {
        return "memory pool " + std::to_string(pool_id) + " twice";
    }
    // Sealed first: the size read after it is the size for good.
    if (::fcntl(memfd.get(), F_ADD_SEALS, F_SEAL_SHRINK) != 0) {
        return std::string("a memory pool that cannot be sealed against shrinking (") +
               std::strerror(errno) + "): not a memfd that allows sealing";
    }
    struct stat about {};
    if (::fstat(memfd.get(), &about) != 0 || !S_ISREG(about.st_mode)) {
        return "a memory pool that is not a file";
    }
    const auto size = static_cast<uint64_t>(about.st_size);
    if (size == 0 || size > kMaxPoolBytes) {
        return "a memory pool of " + std::to_string(size) + " bytes (1 to " +
               std::to_string(kMaxPoolBytes) + ")";
    }
    void* mapped = ::mmap(nullptr, size, PROT_READ, MAP_SHARED, memfd.get(), 0);
    if (mapped == MAP_FAILED) {
        return std::string("mmap: ") + std::strerror(errno);
    }
    pools_[pool_id] = Pool{static_cast<const uint8_t*>(mapped), static_cast<size_t>(size)};
    return "";
}

std::optional<std::span<const uint8_t>> SharedPools::bytes(const SharedBlock& block) const {
    const auto it = pools_.find(block.pool_id);
    if (it == pools_.end() || block.length == 0 ||
        uint64_t{block.offset} + block.length > it->second.size) {
        return std::nullopt;
    }
    return std::span<const uint8_t>(it->second.base + block.offset, block.length);
}

} // namespace audiod::pulse
