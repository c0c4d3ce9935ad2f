// What the engine hands the pulse thread for a stream it made for a
// libpulse client: the stream's id, duplicates of its ring's memfd and
// wake-up eventfd (the pulse thread maps and watches its own), and the
// device it is on. Made on the control thread, taken by the pulse thread.
#pragma once

#include "protocol/unique_fd.h"

#include <cstdint>
#include <string>

namespace audiod::pulse {

struct EngineRing {
    uint32_t stream_id = 0;
    UniqueFd memfd;
    UniqueFd wake_fd;
    uint64_t capacity_frames = 0;
    uint64_t memory_bytes = 0;
    std::string device;        // the sink (playback) or source (record)
    uint32_t device_index = 0; // its pulse index
    uint64_t device_latency_usec = 0;
};

} // namespace audiod::pulse
