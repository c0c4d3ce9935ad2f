// One device's RT work on its streams' rings, a stream at a time: what a
// playback stream gives this cycle (read from its ring, converted where
// its format, channels or rate differ, mixed into the bus at its ramped
// gain, its client woken when it has room to write) and what a record
// stream takes (the bus as played, converted, into its ring, its reader
// woken when there is enough to read).
//
// The ring's header is hostile: the client's position is read once per
// cycle and checked before any data is touched; a stream whose position is
// out of bounds is marked broken (rt.broken) and left for the device to
// drop. A short ring gives silence and an underrun for that stream alone:
// nothing here waits for a client.
//
// The scratch buffers are allocated and locked in memory when the transfer
// is made (control thread); every _rt method runs on the device's RT thread
// and never allocates, locks, logs or blocks.
#pragma once

#include "device/device_format.h"

#include <cstdint>
#include <vector>

namespace audiod {

struct Stream;

class StreamTransfer {
public:
    // Sizes its buffers for a device of `format`. Thread: control.
    explicit StreamTransfer(const DeviceFormat& format);
    ~StreamTransfer();
    StreamTransfer(const StreamTransfer&) = delete;
    StreamTransfer& operator=(const StreamTransfer&) = delete;

    // The most input frames one cycle may take from a stream (at the
    // highest stream rate). Thread: any.
    [[nodiscard]] uint32_t max_input_frames() const noexcept { return max_input_frames_; }

    // When this cycle began (CLOCK_MONOTONIC ns) and how long a cycle
    // lasts: published in the ring of each stream that gives frames, for
    // self-timed writers (ring_layout.h); and when its first frame is heard
    // (0: not known), published as each stream's TimeAnchor. A sink's
    // monitor records what was heard already: its record streams get no
    // anchor (`timed_records` false), only a source's, unless they are
    // heard again later (Stream::replayed_after_ns). Thread: rt.
    void begin_cycle_rt(uint64_t time_ns, uint64_t period_ns, int64_t media_ns,
                        bool timed_records) noexcept {
        cycle_time_ns_ = time_ns;
        cycle_period_ns_ = period_ns;
        media_ns_ = media_ns;
        timed_records_ = timed_records;
    }
    // Mixes one quantum of a playback stream into `bus` (the device's
    // frames and channels); `device_frame` is the device's position.
    void pull_rt(Stream& stream, float* bus, uint64_t device_frame) noexcept;
    // Writes this cycle's `bus` into a record stream's ring.
    void push_rt(Stream& stream, const float* bus, uint64_t device_frame) noexcept;

private:
    // Publishes where the stream's cycle began and when that frame is
    // heard (`heard_ns`; 0: not known), with the pace since the last cycle
    // when it follows on; the cycle moves `frames`.
    void publish_anchor_rt(Stream& stream, uint64_t position, uint32_t frames,
                           int64_t heard_ns) noexcept;
    // A playback stream that needs converting: decoded, resampled, mixed.
    void convert_rt(Stream& stream, uint64_t available, float* bus, uint32_t* consumed,
                    uint32_t* produced) noexcept;

    DeviceFormat format_;
    uint32_t max_input_frames_ = 0;
    // A converted playback stream's frames: decoded to float in the
    // device's channel count (up to max_input_frames_), then resampled (one
    // quantum). A record stream's: remixed to up to 8 channels, resampled
    // to up to max_input_frames_, then encoded.
    std::vector<float> decoded_;
    std::vector<float> resampled_;
    std::vector<float> resampled_for_record_;
    std::vector<uint8_t> record_bytes_;
    uint64_t cycle_time_ns_ = 0;
    uint64_t cycle_period_ns_ = 0;
    int64_t media_ns_ = 0;
    bool timed_records_ = false;
};

} // namespace audiod
