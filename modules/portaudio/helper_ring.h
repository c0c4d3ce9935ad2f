// The shared memory between a portaudio sink or source and its helper
// process (portaudio_helper.cpp, remote_device.h): a ring of frames and the
// few words the two sides say to each other. Plain data, no pointers: each
// side maps the same memfd at an address of its own.
//
// Playback: the server produces (the sink's write) and the helper consumes
// (Pa_WriteStream). Capture: the helper produces (Pa_ReadStream) and the
// server consumes (the source's read). Positions count frames from the
// start and only grow; the producer owns `produced`, the consumer
// `consumed`. Each side wakes the other through an eventfd of its own
// after moving its position, and the helper also after setting `failure`.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>

namespace audiod::portaudio {

constexpr uint32_t kHelperRingMagic = 0x61647061; // "adpa"
constexpr uint32_t kHelperRingVersion = 1;

// What the server asks of the helper, in `command`.
enum HelperCommand : uint32_t {
    kHelperWait = 0,  // stay opened, not started
    kHelperStart = 1, // start the stream and run
    kHelperQuit = 2,  // close the stream and end
};

struct alignas(64) HelperRingHeader {
    uint32_t magic;
    uint32_t version;
    uint32_t capacity;    // frames the ring holds
    uint32_t frame_bytes; // the largest frame the ring holds (4-byte samples)
    std::atomic<uint32_t> command;
    std::atomic<int32_t> failure; // 0, or the negative errno that failed the device
    std::atomic<uint64_t> xruns;  // PortAudio's underflows or overflows
    alignas(64) std::atomic<uint64_t> produced;
    alignas(64) std::atomic<uint64_t> consumed;
};

static_assert(std::atomic<uint64_t>::is_always_lock_free);
static_assert(std::atomic<uint32_t>::is_always_lock_free);
static_assert(std::atomic<int32_t>::is_always_lock_free);
static_assert(sizeof(HelperRingHeader) == 192);

// The ring's frames start at the first cache line after the header.
constexpr size_t kHelperRingDataOffset = sizeof(HelperRingHeader);

inline size_t helper_ring_bytes(uint32_t capacity, uint32_t frame_bytes) {
    return kHelperRingDataOffset + size_t{capacity} * frame_bytes;
}

// The frames from position `at` up to the ring's end, at most `count`:
// the first of the (at most two) contiguous pieces of a transfer.
inline uint32_t helper_ring_first_piece(uint32_t capacity, uint64_t at, uint32_t count) {
    const uint32_t to_end = capacity - static_cast<uint32_t>(at % capacity);
    return count < to_end ? count : to_end;
}

// Wakes the other side: one more on its eventfd. Never blocks (an eventfd
// counter does not fill). Thread: any, rt included.
void wake_other_side(int eventfd) noexcept;

// Copies `count` frames of `frame_bytes` between a linear buffer and the
// ring at frame position `at`, in at most two pieces. Thread: rt.
void copy_into_ring(unsigned char* ring, uint32_t capacity, uint32_t frame_bytes, uint64_t at,
                    const void* from, uint32_t count) noexcept;
void copy_out_of_ring(const unsigned char* ring, uint32_t capacity, uint32_t frame_bytes,
                      uint64_t at, void* to, uint32_t count) noexcept;

} // namespace audiod::portaudio
