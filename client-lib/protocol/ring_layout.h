// The shared-memory layout of one stream: a header followed by the data ring.
//
// The server creates the memfd, sizes it, writes the header, seals the size
// (F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL) and passes it to the client.
// Positions are 64-bit monotonic frame counters that never wrap in practice
// (2^64 frames at 192 kHz is three million years); the ring offset of frame n
// is (n % capacity) * frame_bytes.
//
// Positions. Each side publishes how far it has gone, in a field only it
// writes: `server_pos` (the server: frames it has taken from a playback
// ring, or put into a record ring) and `client_pos` (the client: frames it
// has written to a playback ring, or read from a record ring). The frames
// between the two are the ring's content, so for playback
// 0 <= client_pos - server_pos <= capacity, and for record
// 0 <= server_pos - client_pos <= capacity.
//
// Ownership. Each field has exactly one writer:
//   server: everything in the "server" blocks (server_pos, heartbeat, timing)
//   client: client_pos and the "client" block (flags, wake-up threshold)
// The server treats every client-written field as hostile: it reads
// client_pos once per cycle and checks the bound above before touching data,
// and it never reads back its own fields (it keeps its own copies), so a
// client that scribbles over the header can only hurt itself. The
// description fields (format, capacity...) are informational for the
// client; the server uses the values it chose.
//
// `wake_threshold` is the client's wake-up point: the server signals the
// stream's eventfd when the frames free (playback) or ready (record) cross
// it. A playback writer that sets kClientFlagSelfTimed wakes itself instead,
// just after the cycle that frees what it waits for, timed from
// `cycle_time_ns` (CLOCK_MONOTONIC, the start of the last cycle that took
// frames from the ring) and `cycle_period_ns` (the sink's cycle length):
// signalling a thread costs the server more than its mix, and a writer of
// a ring of a few cycles needs it every cycle. The server signals it only
// when its queue is about to run dry (less than one cycle left) or has.
// `xruns` counts the cycles in which the ring could not keep up: underruns
// for playback (too little to play), overruns for record (no room for what
// was captured).
//
// The layout is plain data with no pointers; bump kRingVersion on any change.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <type_traits>

namespace audiod {

inline constexpr uint32_t kRingMagic = 0x41554452; // "AUDR"
inline constexpr uint32_t kRingVersion = 3;
inline constexpr size_t kCacheLine = 64;
// The data ring starts on its own page so that the header's false sharing
// can't reach sample data.
inline constexpr size_t kRingDataOffset = 4096;
inline constexpr uint64_t kNoFrame = ~uint64_t{0};

// Client flags (RingHeader::client_flags).
inline constexpr uint32_t kClientFlagStarted = 1u << 0;   // start consuming (prebuffer done)
inline constexpr uint32_t kClientFlagDraining = 1u << 1;  // end of data: running dry is expected
inline constexpr uint32_t kClientFlagSelfTimed = 1u << 2; // the writer wakes itself after cycles

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
    alignas(kCacheLine) std::atomic<uint64_t> client_pos;
    alignas(kCacheLine) std::atomic<uint32_t> client_flags;
    std::atomic<uint32_t> wake_threshold;

    // Server-owned, updated every cycle the stream is attached.
    alignas(kCacheLine) std::atomic<uint64_t> server_pos;
    alignas(kCacheLine) std::atomic<uint64_t> heartbeat; // server cycle counter
    std::atomic<uint64_t> xruns;
    std::atomic<uint64_t> sink_start_frame; // kNoFrame until the first frame plays
    std::atomic<uint32_t> sink_latency_frames;
    std::atomic<uint64_t> cycle_time_ns;   // 0 until a cycle takes frames (playback)
    std::atomic<uint64_t> cycle_period_ns; // of the sink playing the stream
};

static_assert(std::is_standard_layout_v<RingHeader>);
static_assert(std::atomic<uint64_t>::is_always_lock_free,
              "ring positions must be lock-free to live in shared memory");
static_assert(std::atomic<uint32_t>::is_always_lock_free);
static_assert(sizeof(RingHeader) <= kRingDataOffset);
static_assert(offsetof(RingHeader, client_pos) % kCacheLine == 0);
static_assert(offsetof(RingHeader, server_pos) % kCacheLine == 0);
static_assert(offsetof(RingHeader, server_pos) - offsetof(RingHeader, client_pos) >= kCacheLine);

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
