// One libpulse record stream, on the pulse thread: the client side of an
// engine record stream's ring (the RT thread writes what a source or a
// sink's monitor captures), read here and sent to the client in chunks
// of its fragment size.
//
// The write index is what the source has put in the ring (its server
// position), the read index what was sent to the client. A client that
// reads its socket slowly is not dropped for it: while its socket's queue
// is long, the ring is left to fill, and what the ring cannot hold is lost
// there (an overrun, counted by the RT thread as audioctl shows).
// Thread: the pulse server's.
#pragma once

#include "protocol/ring_binding.h"
#include "protocol/unique_fd.h"
#include "pulse/buffer_attributes.h"
#include "pulse/engine_ring.h"
#include "pulse/tagstruct.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace audiod::pulse {

// PulseAudio's rules for a record stream's attributes: maxlength at most
// 4 MiB (the default), fragsize 2 s by default and at most maxlength,
// whole frames, at least one.
[[nodiscard]] BufferAttributes record_attributes(const BufferAttributes& asked,
                                                 uint32_t frame_bytes, uint32_t rate) noexcept;

class RecordStream {
public:
    using Made = EngineRing;

    RecordStream(uint32_t channel, const SampleSpec& spec, const ChannelMap& map,
                 const BufferAttributes& attributes)
        : channel_(channel)
        , spec_(spec)
        , map_(map)
        , attributes_(attributes) {}

    // Maps the engine's ring; "" or why it cannot.
    [[nodiscard]] std::string bind(Made made);

    [[nodiscard]] uint32_t channel() const noexcept { return channel_; }
    [[nodiscard]] uint32_t stream_id() const noexcept { return stream_id_; }
    [[nodiscard]] const SampleSpec& spec() const noexcept { return spec_; }
    [[nodiscard]] const ChannelMap& map() const noexcept { return map_; }
    [[nodiscard]] const BufferAttributes& attributes() const noexcept { return attributes_; }
    [[nodiscard]] const std::string& source() const noexcept { return source_; }
    [[nodiscard]] uint32_t source_index() const noexcept { return source_index_; }
    [[nodiscard]] uint64_t source_latency_usec() const noexcept { return source_latency_usec_; }
    // Moved by the engine (audioctl move-stream, a source gone).
    void moved_to(std::string source, uint32_t index) {
        source_ = std::move(source);
        source_index_ = index;
    }
    [[nodiscard]] int wake_fd() const noexcept { return wake_fd_.get(); }
    [[nodiscard]] const PropertyList& properties() const noexcept { return properties_; }
    PropertyList& properties() noexcept { return properties_; }

    // The next chunk to send, at most a fragment (empty: less than a
    // fragment is ready, unless `all` asks for what there is).
    [[nodiscard]] std::vector<uint8_t> take_chunk(bool all = false);
    // FLUSH: drops what is ready.
    void flush();

    void set_corked(bool corked) { corked_ = corked; }
    [[nodiscard]] bool corked() const noexcept { return corked_; }

    // Timing, for GET_RECORD_LATENCY.
    [[nodiscard]] int64_t write_index() const noexcept;
    [[nodiscard]] int64_t read_index() const noexcept;
    [[nodiscard]] uint64_t ready_bytes() const noexcept;

private:
    uint32_t channel_;
    SampleSpec spec_;
    ChannelMap map_;
    BufferAttributes attributes_;
    uint32_t frame_bytes_ = 1;
    uint32_t stream_id_ = 0;
    std::string source_;
    uint32_t source_index_ = 0;
    uint64_t source_latency_usec_ = 0;
    RingBinding ring_;
    UniqueFd wake_fd_;
    PropertyList properties_;
    // Where the client's channel order is not audiod's: for each of the
    // client's channels, the ring's (channel_order.h).
    std::optional<std::vector<uint8_t>> order_;
    uint64_t client_pos_ = 0; // ring frames read
    bool corked_ = false;
};

} // namespace audiod::pulse
