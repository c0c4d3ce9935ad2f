// The shared-memory layout of one stream: a header followed by the data ring.
//
// The server creates the memfd, sizes it, writes the header, seals the size
// (F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL) and passes it to the client.
// Positions are 64-bit monotonic frame counters that never wrap in practice
// (2^64 frames at 192 kHz is three million years); the ring offset of frame n
// is (n % capacity) * frame_bytes.
//
// Ownership. Each field has exactly one writer:
//   server: everything in the "server" blocks (read_pos, heartbeat, timing)
//   client: write_pos and the "client" block (flags, wake-up threshold)
// The server treats every client-written field as hostile: it reads
// write_pos once per cycle and checks 0 <= write_pos - read_pos <= capacity
// before touching data, and it never reads back its own fields (it keeps its
// own copies), so a client that scribbles over the header can only hurt
// itself. The description fields (format, capacity...) are informational for
// the client; the server uses the values it chose.
//
// Record streams use the same layout with the audio flowing the other way,
// and keep each field's single writer: the server writes the frames and
// publishes how far it has written in `read_pos` (its field); the client
// reads them and publishes how far it has read in `write_pos` (its field),
// which the server checks like any client position:
// 0 <= server position - write_pos <= capacity. `wake_free_frames` is then
// "wake me when this many frames are ready", and `underruns` counts
// overruns: cycles in which the client had left no room.
//
// The layout is plain data with no pointers; bump kRingVersion on any change.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <type_traits>

namespace audiod {

inline constexpr uint32_t kRingMagic = 0x41554452; // "AUDR"
inline constexpr uint32_t kRingVersion = 1;
inline constexpr size_t kCacheLine = 64;
// The data ring starts on its own page so that the header's false sharing
// can't reach sample data.
inline constexpr size_t kRingDataOffset = 4096;
inline constexpr uint64_t kNoFrame = ~uint64_t{0};

// Client flags (RingHeader::client_flags).
inline constexpr uint32_t kClientFlagStarted = 1u << 0;  // start consuming (prebuffer done)
inline constexpr uint32_t kClientFlagDraining = 1u << 1; // end of data: running dry is expected

struct RingHeader {
    // Written once by the server before the memfd is shared.
    uint32_t magic;
    uint32_t version;
    uint32_t format; // SampleFormat
    uint32_t rate;
    uint32_t channels;
    uint32_t frame_bytes;
    uint64_t capacity_frames;
    uint64_t data_offset;

    // Client-owned.
    alignas(kCacheLine) std::atomic<uint64_t> write_pos;
    alignas(kCacheLine) std::atomic<uint32_t> client_flags;
    std::atomic<uint32_t> wake_free_frames; // wake me when this much space is free

    // Server-owned, updated every cycle the stream is attached.
    alignas(kCacheLine) std::atomic<uint64_t> read_pos;
    alignas(kCacheLine) std::atomic<uint64_t> heartbeat; // server cycle counter
    std::atomic<uint64_t> underruns;
    std::atomic<uint64_t> sink_start_frame; // kNoFrame until the first frame plays
    std::atomic<uint32_t> sink_latency_frames;
    std::atomic<uint32_t> server_flags;
};

static_assert(std::is_standard_layout_v<RingHeader>);
static_assert(std::atomic<uint64_t>::is_always_lock_free,
              "ring positions must be lock-free to live in shared memory");
static_assert(std::atomic<uint32_t>::is_always_lock_free);
static_assert(sizeof(RingHeader) <= kRingDataOffset);
static_assert(offsetof(RingHeader, write_pos) % kCacheLine == 0);
static_assert(offsetof(RingHeader, read_pos) % kCacheLine == 0);
static_assert(offsetof(RingHeader, read_pos) - offsetof(RingHeader, write_pos) >= kCacheLine);

// Total memfd size for a ring; 0 if the parameters would overflow.
[[nodiscard]] constexpr size_t ring_memory_bytes(uint64_t capacity_frames,
                                                 uint32_t frame_bytes) noexcept {
    constexpr uint64_t kMaxData = uint64_t{1} << 30;
    if (frame_bytes == 0 || capacity_frames == 0 || capacity_frames > kMaxData / frame_bytes) {
        return 0;
    }
    return kRingDataOffset + capacity_frames * frame_bytes;
}

} // namespace audiod
