// A playback stream's buffer attributes, as PulseAudio's rules fix what a
// client asks for (every value in bytes; -1, 0xffffffff, means "the
// server's default"):
//
//   maxlength  the most the server queues: at most 4 MiB (the default)
//   tlength    the queue the server keeps filled by its REQUESTs: 2 s by
//              default, at most maxlength, and never below the sink's
//              latency plus two minreqs (what keeps a sink from running dry
//              between two requests)
//   minreq     the smallest REQUEST: min(20 ms, tlength / 4) by default
//   prebuf     what must be queued before playing starts: at most
//              tlength - minreq + one frame (the default); 0 never waits
//
// Every value is a whole number of frames, and at least one. libpulse
// takes what the reply says, so a client's smoothed clock and its writes
// follow these. Thread: any (pure).
#pragma once

#include <cstdint>

namespace audiod::pulse {

inline constexpr uint32_t kDefaultAttribute = 0xffffffffu;
inline constexpr uint32_t kMaxQueueBytes = 4u << 20;

struct BufferAttributes {
    uint32_t maxlength = kDefaultAttribute;
    uint32_t tlength = kDefaultAttribute;
    uint32_t prebuf = kDefaultAttribute;
    uint32_t minreq = kDefaultAttribute;
    uint32_t fragsize = kDefaultAttribute; // record streams only
};

// What a playback stream gets for `asked`, at `frame_bytes` bytes per frame
// and `rate` frames a second, on a sink whose own latency is
// `sink_latency_usec`.
[[nodiscard]] BufferAttributes playback_attributes(const BufferAttributes& asked,
                                                   uint32_t frame_bytes, uint32_t rate,
                                                   uint64_t sink_latency_usec) noexcept;

// Bytes of `usec` microseconds, rounded up to whole frames.
[[nodiscard]] uint64_t usec_to_bytes(uint64_t usec, uint32_t frame_bytes, uint32_t rate) noexcept;
// Microseconds of `bytes`.
[[nodiscard]] uint64_t bytes_to_usec(uint64_t bytes, uint32_t frame_bytes, uint32_t rate) noexcept;

} // namespace audiod::pulse
