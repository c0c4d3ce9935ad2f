#include "pulse/engine_ring.h"

#include "device/stream.h"
#include "protocol/messages.h"

#include <fcntl.h>

namespace audiod::pulse {

std::shared_ptr<EngineRing> hand_over_ring(Stream& stream, std::string device,
                                           uint64_t device_latency_usec) {
    auto ring = std::make_shared<EngineRing>();
    ring->stream_id = stream.id;
    ring->memfd = UniqueFd(::fcntl(stream.ring.memfd(), F_DUPFD_CLOEXEC, 0));
    ring->wake_fd = UniqueFd(::fcntl(stream.wake_fd.get(), F_DUPFD_CLOEXEC, 0));
    ring->capacity_frames = stream.ring.capacity();
    ring->memory_bytes = stream.ring.memory_bytes();
    ring->device = std::move(device);
    ring->device_latency_usec = device_latency_usec;
    stream.ring.close_memfd();
    return ring;
}

std::string map_ring(RingBinding& ring, const EngineRing& made, uint32_t frame_bytes) {
    proto::StreamCreated created;
    created.stream_id = made.stream_id;
    created.capacity_frames = made.capacity_frames;
    created.memory_bytes = made.memory_bytes;
    if (frame_bytes == 0 || !made.memfd || !made.wake_fd ||
        ring.map(created, made.memfd.get(), frame_bytes) != 0) {
        return "cannot map the stream's ring";
    }
    return "";
}

} // namespace audiod::pulse
