// A stream as the server holds it — playback (the server reads its ring and
// mixes it into a sink) or record (the server fills its ring from a source
// or a sink's monitor): the shared ring, the client it belongs to, and the
// state the RT thread keeps while it is attached.
//
// Ownership. The engine's stream table (control thread) owns every Stream. While a stream is
// attached to a sink, the sink's RT thread also uses it; the hand-over in both
// directions goes through the sink's command and event queues, whose
// release/acquire ordering makes the `rt` block safe to touch from whichever
// thread currently holds the stream. Fields are grouped by which thread may
// touch them.
#pragma once

#include "common/seq_locked.h"
#include "device/placement.h"
#include "device/time_anchor.h"
#include "dsp/channel_mix.h"
#include "dsp/gain_ramp.h"
#include "dsp/resampler.h"
#include "protocol/ring_layout.h"
#include "protocol/ring_view.h"
#include "protocol/sample_format.h"
#include "protocol/unique_fd.h"

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <variant>

namespace audiod {

class Device;

// The server's side of one memfd ring. It keeps its own copies of the ring
// parameters; the copies in the shared header are for the client only.
class StreamRing {
public:
    // Creates, sizes, initialises and seals the memfd. Thread: control.
    static std::variant<StreamRing, std::string> create(uint32_t stream_id, SampleFormat format,
                                                        uint32_t rate, uint32_t channels,
                                                        uint64_t capacity_frames);
    StreamRing(StreamRing&& other) noexcept;
    StreamRing& operator=(StreamRing&&) = delete;
    StreamRing(const StreamRing&) = delete;
    ~StreamRing();

    [[nodiscard]] RingHeader* header() const noexcept { return header_; }
    [[nodiscard]] const uint8_t* data() const noexcept { return data_; }
    // The data ring by stream position (protocol/ring_view.h).
    [[nodiscard]] RingView view() const noexcept { return {data_, capacity_, frame_bytes_}; }
    [[nodiscard]] uint64_t capacity() const noexcept { return capacity_; }
    [[nodiscard]] uint32_t frame_bytes() const noexcept { return frame_bytes_; }
    [[nodiscard]] size_t memory_bytes() const noexcept { return bytes_; }
    [[nodiscard]] int memfd() const noexcept { return memfd_.get(); }
    // The client has its copy once it is sent; ours is not needed after that.
    void close_memfd() noexcept { memfd_.reset(); }

private:
    StreamRing() = default;

    UniqueFd memfd_;
    void* mapping_ = nullptr;
    size_t bytes_ = 0;
    RingHeader* header_ = nullptr;
    uint8_t* data_ = nullptr;
    uint64_t capacity_ = 0;
    uint32_t frame_bytes_ = 0;
};

// What the RT thread last saw of a stream, published for `audioctl list`.
enum class RtStreamStatus : uint8_t { prebuffering, playing, draining, drained };

struct Stream {
    Stream(StreamRing&& r, UniqueFd&& wake)
        : ring(std::move(r))
        , wake_fd(std::move(wake)) {}

    // ---- Thread: control -------------------------------------------------
    uint32_t id = 0;
    uint32_t client_id = 0;
    uint32_t pid = 0;
    std::string app;
    SampleFormat format = SampleFormat::invalid;
    uint32_t rate = 0;
    uint32_t channels = 0;
    // A record stream takes what its sink plays (the sink's monitor source)
    // into the ring for the client to read; see ring_layout.h.
    bool record = false;
    float volume = 1.0f;
    bool muted = false;
    bool paused = false;
    // Which device it is on, whether that device's RT thread holds it, and
    // where it belongs (device/placement.h). Only the router changes it.
    Placement placement;

    StreamRing ring;
    UniqueFd wake_fd; // the server writes, the client polls

    // How the RT thread turns the ring's frames into the sink's: set up by
    // the Engine for each sink before the stream is attached to it, and
    // used by that sink's RT thread only while attached.
    struct Conversion {
        // Playback: s16le or f32le at the sink's rate and channel count,
        // mixed as it is. Record: the sink's rate and channel count.
        bool direct = true;
        ChannelMix mix;                       // stream -> sink (record: sink -> stream)
        std::unique_ptr<Resampler> resampler; // null when the rates match
    } conversion;

    // ---- Thread: the RT thread of the sink it is attached to ------------
    struct Rt {
        uint64_t server_pos = 0;
        GainRamp gain;
        bool paused = false;
        bool started = false;
        bool broken = false;
        TimeAnchor anchor;          // the last published (heard)
        uint32_t anchor_frames = 0; // and the frames its cycle moved
    } rt;

    // ---- Thread: any (written by RT, read by control) -------------------
    std::atomic<uint64_t> xruns{0};
    std::atomic<uint64_t> consumed{0};
    std::atomic<uint32_t> starved_cycles{0}; // consecutive cycles it came up short
    std::atomic<RtStreamStatus> rt_status{RtStreamStatus::prebuffering};
    // Whether the RT thread publishes `heard` each cycle: only for the
    // streams a relay times (engine/relays.h), which alone read it; set by
    // the control thread, read by the RT thread.
    std::atomic<bool> anchored{false};
    // A record stream on a sink's monitor whose frames are heard again this
    // long after the sink plays them (a group's local member, which plays
    // in step with the rooms: engine/groups.h); 0: a monitor's records have
    // no anchor. Set by the control thread; read by the RT thread each cycle.
    std::atomic<int64_t> replayed_after_ns{0};
    SeqLocked<TimeAnchor> heard;

    // The device it is on (while moving: the one it is leaving). Thread: control.
    [[nodiscard]] Device* device() const noexcept { return placement.device(); }
};

// Drops a playback stream's frames before ring position `position`, as far
// as they are there (a position outside what the client has written is
// ignored: the client's word is not trusted), and makes it wait for a start
// again. Thread: whichever holds the stream (never allocates).
void flush_stream(Stream& stream, uint64_t position) noexcept;

} // namespace audiod
