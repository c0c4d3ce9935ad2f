// What the engine hands the pulse thread for a stream it made for a
// libpulse client: the stream's id, duplicates of its ring's memfd and
// wake-up eventfd (the pulse thread maps and watches its own), and the
// device it is on. Made on the control thread, taken by the pulse thread.
#pragma once

#include "protocol/ring_binding.h"
#include "protocol/unique_fd.h"

#include <cstdint>
#include <memory>
#include <string>

namespace audiod {
struct Stream;
}

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

// The ring of a stream the engine has just made, for the pulse thread:
// duplicates of its memfd and eventfd; the engine's copy of the memfd is
// closed, as when it is sent to a libaudiod client. Thread: control.
[[nodiscard]] std::shared_ptr<EngineRing> hand_over_ring(Stream& stream, std::string device,
                                                         uint64_t device_latency_usec);

// Maps it into `ring`: "" or why it cannot. Thread: pulse.
[[nodiscard]] std::string map_ring(RingBinding& ring, const EngineRing& made, uint32_t frame_bytes);

} // namespace audiod::pulse
