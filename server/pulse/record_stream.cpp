#include "pulse/record_stream.h"

#include "pulse/channel_order.h"

#include "pulse/sample_spec.h"

#include <algorithm>

namespace audiod::pulse {

BufferAttributes record_attributes(const BufferAttributes& asked, uint32_t frame_bytes,
                                   uint32_t rate) noexcept {
    // The playback rules give maxlength; fragsize is as tlength's default.
    BufferAttributes a;
    const uint32_t most = kMaxQueueBytes / frame_bytes * frame_bytes;
    a.maxlength = asked.maxlength == kDefaultAttribute || asked.maxlength > most
                      ? most
                      : std::max(asked.maxlength / frame_bytes * frame_bytes, frame_bytes);
    const uint64_t fragment = asked.fragsize == kDefaultAttribute
                                  ? usec_to_bytes(2000000, frame_bytes, rate)
                                  : asked.fragsize;
    a.fragsize = static_cast<uint32_t>(
        std::clamp<uint64_t>(fragment / frame_bytes * frame_bytes, frame_bytes, a.maxlength));
    return a;
}

std::string RecordStream::bind(Made made) {
    frame_bytes_ = frame_bytes(spec_);
    if (auto order = standard_order_of(map_)) {
        order_ = inverse_order(*order);
    }
    if (std::string why = map_ring(ring_, made, frame_bytes_); !why.empty()) {
        return why;
    }
    stream_id_ = made.stream_id;
    wake_fd_ = std::move(made.wake_fd);
    source_ = std::move(made.device);
    source_index_ = made.device_index;
    source_latency_usec_ = made.device_latency_usec;
    // Woken when a fragment is ready (or the ring is half full, if a
    // fragment is more than it holds).
    const uint64_t fragment = std::min<uint64_t>(attributes_.fragsize / frame_bytes_,
                                                 std::max<uint64_t>(1, ring_.capacity() / 2));
    ring_.header()->wake_threshold.store(static_cast<uint32_t>(std::max<uint64_t>(1, fragment)),
                                         std::memory_order_relaxed);
    return "";
}

std::vector<uint8_t> RecordStream::take_chunk(bool all) {
    if (!ring_.bound()) {
        return {};
    }
    const uint64_t ready = ring_.ready(client_pos_);
    const uint64_t fragment = std::max<uint64_t>(
        1, std::min<uint64_t>(attributes_.fragsize / frame_bytes_, ring_.capacity() / 2));
    if (ready == 0 || (!all && ready < fragment)) {
        return {};
    }
    const uint64_t frames = std::min(ready, fragment);
    std::vector<uint8_t> chunk(frames * frame_bytes_);
    ring_.read(client_pos_, chunk.data(), frames);
    client_pos_ += frames;
    if (order_) {
        // Back into the client's channel order (channel_order.h).
        std::vector<uint8_t> ordered(chunk.size());
        reorder_frames(chunk, ordered, *order_, frame_bytes_ / spec_.channels);
        return ordered;
    }
    return chunk;
}

void RecordStream::flush() {
    if (ring_.bound()) {
        const uint64_t ready = ring_.ready(client_pos_);
        client_pos_ += ready;
        ring_.read(client_pos_, nullptr, 0);
    }
}

int64_t RecordStream::write_index() const noexcept {
    return static_cast<int64_t>((client_pos_ + (ring_.bound() ? ring_.ready(client_pos_) : 0)) *
                                frame_bytes_);
}

int64_t RecordStream::read_index() const noexcept {
    return static_cast<int64_t>(client_pos_ * frame_bytes_);
}

uint64_t RecordStream::ready_bytes() const noexcept {
    return ring_.bound() ? ring_.ready(client_pos_) * frame_bytes_ : 0;
}

} // namespace audiod::pulse
