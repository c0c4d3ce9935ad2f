// Audio in a client's shared memory. libpulse keeps what a program plays
// in a memory pool (a memfd, 64 MiB by default) and, where the server
// agrees, sends the server the pool once (REGISTER_MEMFD_SHMID, the memfd
// passed with it) and then, for each block of audio, only where it is: a
// 16-byte reference (block id, pool id, offset, length) instead of the
// bytes. The server copies the block into the stream's ring and tells the
// client the block is free again (a release frame).
//
// The pool is the client's: it may write to it at any time (that only
// changes its own audio) and, unless stopped, shrink it under the
// server's mapping, which would fault the server's thread on its next
// read. So a pool is taken only if it can be sealed against shrinking
// (F_SEAL_SHRINK, which libpulse's memfds allow and never use
// themselves), and every block is checked to lie inside it. Only memfd
// pools are agreed on (never POSIX shared memory by name), only with a
// client of the server's own uid, as PulseAudio does.
// Thread: the one that owns it (the pulse server's).
#pragma once

#include "protocol/unique_fd.h"

#include <cstdint>
#include <map>
#include <optional>
#include <span>
#include <string>

namespace audiod::pulse {

// Where a block of audio is, as an audio frame in shared memory says.
struct SharedBlock {
    uint32_t block_id = 0; // the client's, for the release
    uint32_t pool_id = 0;  // the shm_id it registered
    uint32_t offset = 0;   // in the pool
    uint32_t length = 0;
};

// The four big-endian words of such a frame's payload; nullopt unless
// there are exactly 16 bytes.
[[nodiscard]] std::optional<SharedBlock> read_shared_block(std::span<const uint8_t> payload);

class SharedPools {
public:
    static constexpr size_t kMaxPools = 16;               // PulseAudio's own limit
    static constexpr uint64_t kMaxPoolBytes = 1ull << 30; // likewise

    SharedPools() = default;
    SharedPools(const SharedPools&) = delete;
    SharedPools& operator=(const SharedPools&) = delete;
    ~SharedPools();

    // Takes a client's pool: "" or why it cannot (not a memfd, cannot be
    // sealed, empty or too large, an id already taken, too many pools).
    [[nodiscard]] std::string add(uint32_t pool_id, UniqueFd memfd);
    // The bytes a block names, or nullopt if they are not all in one of
    // the pools.
    [[nodiscard]] std::optional<std::span<const uint8_t>> bytes(const SharedBlock& block) const;
    [[nodiscard]] size_t size() const noexcept { return pools_.size(); }

private:
    struct Pool {
        const uint8_t* base = nullptr;
        size_t size = 0;
    };
    std::map<uint32_t, Pool> pools_;
};

} // namespace audiod::pulse
