#include "pulse/buffer_attributes.h"

#include <algorithm>

namespace audiod::pulse {

namespace {

// `bytes` rounded down to whole frames, and at least one.
uint32_t whole_frames(uint64_t bytes, uint32_t frame_bytes) noexcept {
    const uint64_t rounded = bytes / frame_bytes * frame_bytes;
    const uint64_t most = kMaxQueueBytes / frame_bytes * frame_bytes;
    return static_cast<uint32_t>(std::clamp<uint64_t>(rounded, frame_bytes, most));
}

} // namespace

uint64_t usec_to_bytes(uint64_t usec, uint32_t frame_bytes, uint32_t rate) noexcept {
    return (usec * rate + 999999) / 1000000 * frame_bytes;
}

uint64_t bytes_to_usec(uint64_t bytes, uint32_t frame_bytes, uint32_t rate) noexcept {
    return frame_bytes == 0 || rate == 0 ? 0 : bytes / frame_bytes * 1000000 / rate;
}

BufferAttributes playback_attributes(const BufferAttributes& asked, uint32_t frame_bytes,
                                     uint32_t rate, uint64_t sink_latency_usec) noexcept {
    BufferAttributes a;
    const uint32_t max_queue = kMaxQueueBytes / frame_bytes * frame_bytes;
    a.maxlength = asked.maxlength == kDefaultAttribute || asked.maxlength > max_queue
                      ? max_queue
                      : whole_frames(asked.maxlength, frame_bytes);

    a.tlength =
        whole_frames(asked.tlength == kDefaultAttribute ? usec_to_bytes(2000000, frame_bytes, rate)
                                                        : asked.tlength,
                     frame_bytes);
    a.tlength = std::min(a.tlength, a.maxlength);

    const uint64_t twenty_ms = usec_to_bytes(20000, frame_bytes, rate);
    a.minreq = whole_frames(asked.minreq == kDefaultAttribute
                                ? std::min<uint64_t>(twenty_ms, a.tlength / 4)
                                : asked.minreq,
                            frame_bytes);

    // The sink must never run dry between two requests.
    const uint64_t floor = usec_to_bytes(sink_latency_usec, frame_bytes, rate) + 2 * a.minreq;
    if (a.tlength < floor) {
        a.tlength = whole_frames(std::min<uint64_t>(floor, a.maxlength), frame_bytes);
    }
    a.minreq = std::min(a.minreq, a.tlength);

    const uint32_t most_prebuf = a.tlength - a.minreq + frame_bytes;
    a.prebuf = asked.prebuf == kDefaultAttribute ? most_prebuf
               : asked.prebuf == 0               ? 0
                                   : std::min(whole_frames(asked.prebuf, frame_bytes), most_prebuf);
    return a;
}

} // namespace audiod::pulse
