// One libpulse playback stream, on the pulse thread: the client side of an
// engine stream's ring, written with what the client sends, and the
// PulseAudio bookkeeping around it.
//
// Indices. PulseAudio counts a stream in bytes: the write index (what the
// client has written, seeks included) and the read index (what the sink
// has taken). Here both are ring positions times the frame size (plus
// what went by dry, below): the write index is the ring's client position,
// the read index its server position, so GET_PLAYBACK_LATENCY reports what
// the RT thread really took. A flush drops what is queued: the read index
// jumps to the write index.
//
// A stream that never waits for data (prebuf 0: GStreamer's pulsesink,
// mpv) keeps its read index moving through an underrun, as PulseAudio's
// does: the sink plays silence in its place, and a player whose clock
// follows the read index (pulsesink's does) sees time go on. What the
// client then writes for the time that went by is dropped, up to the read
// index, and the rest plays on time.
//
// Flow control. The client may have `tlength` bytes queued or asked for;
// `outstanding` is what REQUESTs asked for that has not come. A REQUEST
// goes out only for at least a batch, when the RT thread's wake-up (the
// ring's threshold, set at tlength - batch queued) or the client's own
// data shows that much missing: never one per quantum. The batch is
// `minreq`, or an eighth of tlength where that is more and still leaves
// the sink what the buffer rules promise: a client with a long queue
// (paplay's 2 s, minreq 20 ms) hears from the server 4 times a second
// instead of 50, each time a wake-up of this thread and of the client,
// and its queue stays within an eighth of full. minreq is the least a
// REQUEST asks for, so libpulse takes bigger ones as they come. A client
// that asked for EARLY_REQUESTS is asked at every minreq.
//
// Thread: the pulse server's.
#pragma once

#include "protocol/ring_binding.h"
#include "protocol/unique_fd.h"
#include "pulse/buffer_attributes.h"
#include "pulse/engine_ring.h"
#include "pulse/frame.h"
#include "pulse/tagstruct.h"

#include <chrono>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace audiod::pulse {

class PlaybackStream {
public:
    using Clock = std::chrono::steady_clock;

    using Made = EngineRing;

    PlaybackStream(uint32_t channel, const SampleSpec& spec, const ChannelMap& map,
                   const BufferAttributes& attributes, bool early_requests = false)
        : channel_(channel)
        , spec_(spec)
        , map_(map)
        , attributes_(attributes)
        , early_requests_(early_requests) {}

    // Maps the engine's ring; "" or why it cannot.
    [[nodiscard]] std::string bind(Made made);

    [[nodiscard]] uint32_t channel() const noexcept { return channel_; }
    [[nodiscard]] uint32_t stream_id() const noexcept { return stream_id_; }
    [[nodiscard]] const SampleSpec& spec() const noexcept { return spec_; }
    [[nodiscard]] const ChannelMap& map() const noexcept { return map_; }
    [[nodiscard]] const BufferAttributes& attributes() const noexcept { return attributes_; }
    [[nodiscard]] const std::string& sink() const noexcept { return sink_; }
    [[nodiscard]] uint32_t sink_index() const noexcept { return sink_index_; }
    [[nodiscard]] uint64_t sink_latency_usec() const noexcept { return sink_latency_usec_; }
    // Moved by the engine (audioctl move-stream, a sink gone).
    void moved_to(std::string sink, uint32_t index) {
        sink_ = std::move(sink);
        sink_index_ = index;
    }
    [[nodiscard]] int wake_fd() const noexcept { return wake_fd_.get(); }
    [[nodiscard]] bool bound() const noexcept { return ring_.bound(); }
    // What the client says of the stream (media.name...), for introspection.
    [[nodiscard]] const PropertyList& properties() const noexcept { return properties_; }
    PropertyList& properties() noexcept { return properties_; }

    // Audio from the client, at `offset` by `mode`. Returns false if some of
    // it did not fit (an overflow: the client wrote past maxlength).
    bool write(std::span<const uint8_t> bytes, int64_t offset, SeekMode mode);

    // The bytes to REQUEST now (0: none), counted as asked for.
    [[nodiscard]] uint32_t take_request();
    // The least a REQUEST asks for (see Flow control).
    [[nodiscard]] uint64_t request_batch() const noexcept;
    // The bytes of the creation reply's `missing`, counted as asked for.
    [[nodiscard]] uint32_t take_first_request();

    void set_corked(bool corked);
    [[nodiscard]] bool corked() const noexcept { return corked_; }
    // TRIGGER: start now, whatever is queued. PREBUF: wait for prebuf again.
    void trigger();
    void prebuffer();
    // FLUSH: the ring position the engine drops what is queued before;
    // the stream waits for prebuf again.
    [[nodiscard]] uint64_t flush_position();

    // DRAIN: its reply waits until what is queued has been heard.
    void drain(uint32_t tag);
    // Replies due at `now`: drains whose audio has been heard.
    [[nodiscard]] std::vector<uint32_t> drained(Clock::time_point now);
    // When drained() has something due next, if anything waits.
    [[nodiscard]] std::optional<Clock::time_point> next_deadline() const noexcept;

    // Events the RT thread's progress calls for, once each: the first
    // frame heard since a start (STARTED), the queue run dry (UNDERFLOW).
    [[nodiscard]] bool take_started();
    [[nodiscard]] bool take_underflow();

    // Timing, for GET_PLAYBACK_LATENCY.
    [[nodiscard]] int64_t write_index() const noexcept;
    [[nodiscard]] int64_t read_index() const noexcept;
    [[nodiscard]] uint64_t sink_usec() const noexcept;
    [[nodiscard]] bool playing() const noexcept;
    [[nodiscard]] uint64_t underrun_for() const noexcept;
    [[nodiscard]] uint64_t playing_for() const noexcept;

private:
    [[nodiscard]] uint64_t queued_frames() const noexcept;
    [[nodiscard]] uint64_t server_pos() const noexcept;
    // Sets the ring's start flag once prebuf is queued (or at once).
    void maybe_start();
    void set_wake_threshold() noexcept;
    // prebuf 0: the read index goes on through an underrun.
    [[nodiscard]] bool keeps_time() const noexcept { return attributes_.prebuf == 0; }
    // Bytes of silence heard since the queue ran dry (0: not dry).
    [[nodiscard]] uint64_t dry_bytes(Clock::time_point now) const noexcept;
    // Ends a dry spell: the indices move on by what went by.
    void end_dry_spell(Clock::time_point now) noexcept;
    // Writes whole frames at the client position, in audiod's channel order.
    void put_frames(const uint8_t* frames, uint64_t count);

    uint32_t channel_;
    SampleSpec spec_;
    ChannelMap map_;
    BufferAttributes attributes_;
    uint32_t frame_bytes_ = 1;
    uint32_t stream_id_ = 0;
    std::string sink_;
    uint32_t sink_index_ = 0;
    uint64_t sink_latency_usec_ = 0;
    bool early_requests_ = false;
    RingBinding ring_;
    UniqueFd wake_fd_;
    PropertyList properties_;
    // Where the client's channel order is not audiod's: for each ring
    // channel, the client's (channel_order.h).
    std::optional<std::vector<uint8_t>> order_;
    std::vector<uint8_t> reordered_;

    uint64_t client_pos_ = 0;      // ring frames written
    std::vector<uint8_t> partial_; // a frame's first bytes, till the rest come
    uint64_t outstanding_ = 0;     // bytes asked for and not yet come
    bool corked_ = false;
    bool started_ = false;  // the ring's start flag is set
    bool prebuffer_ = true; // waiting for prebuf before starting
    bool heard_ = false;    // STARTED sent since the last start
    bool dry_ = false;      // UNDERFLOW sent since data last came
    uint64_t started_at_pos_ = 0;
    uint64_t underflow_pos_ = 0;
    uint64_t base_ = 0;                          // bytes the indices are ahead of the ring
    uint64_t silence_bytes_ = 0;                 // heard dry before a cork
    std::optional<Clock::time_point> dry_since_; // dry, uncorked, keeping time

    struct Drain {
        uint32_t tag = 0;
        uint64_t until_pos = 0; // ring position that must be taken first
        std::optional<Clock::time_point> heard_at;
    };
    std::vector<Drain> drains_;
};

} // namespace audiod::pulse
