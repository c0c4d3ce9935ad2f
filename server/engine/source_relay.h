// A source relayed into a sink: `[sources.NAME] sink = "SINK"`, or
// `audioctl load-source TYPE NAME sink=SINK`. A headless RTP receiver is
// one such source and one sound card.
//
// The engine gives the relay two streams of the server's own (client id
// 0, application "TYPE:NAME"): a record stream on the source and a playback
// stream on the sink. The relay's thread carries the audio from one ring
// to the other as a client would, but without a socket, and it never asks
// the control thread for anything. So the played source is a playback
// stream like any other: set-volume, mute and move-stream work on it, and
// it is rescued when its sink goes and brought back when it returns. The
// record stream is pinned to its source (never moved or rescued to a
// monitor, which would feed a sink its own output).
//
// Two clocks. The source runs on its own clock (a capture card's, or the
// system clock pacing an RTP source) and the sink on its own; two crystals
// differ by tens of ppm, and 50 ppm is 180 ms an hour. The relay resamples
// by a ratio (DriftResampler) that a ClockFollower steers from how much is
// queued in the playback ring, so the queue stays at its target for as long
// as the relay runs. Clocks that agree (a null or file sink, on the system
// clock like an RTP source) leave the ratio at exactly 1. Should the queue
// run dry (this thread held up, or the source) the relay starts again from
// the target and counts a refill; should it overfill (the sink stopped
// taking for longer than drift could explain), it drops back to the target
// and counts a resync. Before the sink first takes, the queue just waits
// at its starting level. A refill is the machine's doing; a resync with
// devices that kept time would be the loop's.
//
// Thread: the relay's own, at the server's RT priority (it is in the
// audio path); it never allocates, locks or waits for the control thread.
// The control thread creates and destroys the relay; the streams must
// outlive it.
#pragma once

#include "common/clock_follower.h"
#include "common/drift_resampler.h"
#include "protocol/unique_fd.h"

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <thread>
#include <vector>

namespace audiod {

struct Stream;

class SourceRelay {
public:
    // `record` is on the source, `playback` on the sink; both are f32 at
    // the same rate and channel count. `target_frames`: the queue to hold;
    // `source_quantum`: the frames the source delivers a cycle;
    // `sink_quantum`: the most the sink takes a cycle (in the source's
    // frames). Returns null if no thread can be started. Thread: control.
    static std::unique_ptr<SourceRelay> start(std::string name, Stream& record, Stream& playback,
                                              uint32_t target_frames, uint32_t source_quantum,
                                              uint32_t sink_quantum, int rt_priority);
    // Stops and joins the thread (within one poll interval). Thread: control.
    ~SourceRelay();
    SourceRelay(const SourceRelay&) = delete;
    SourceRelay& operator=(const SourceRelay&) = delete;

    [[nodiscard]] const std::string& name() const noexcept { return name_; }
    [[nodiscard]] Stream& record() const noexcept { return record_; }
    [[nodiscard]] Stream& playback() const noexcept { return playback_; }
    // For `audioctl list`. Thread: any.
    [[nodiscard]] double ratio() const noexcept { return ratio_.load(std::memory_order_relaxed); }
    [[nodiscard]] uint64_t resyncs() const noexcept {
        return resyncs_.load(std::memory_order_relaxed);
    }
    [[nodiscard]] uint64_t refills() const noexcept {
        return refills_.load(std::memory_order_relaxed);
    }
    // Times the clock loop started over because the sink had paused (a
    // move, or its cycle held up): what it had not yet learnt is learnt
    // again.
    [[nodiscard]] uint64_t restarts() const noexcept {
        return restarts_.load(std::memory_order_relaxed);
    }
    [[nodiscard]] uint32_t target_frames() const noexcept { return target_; }
    // The queue, filtered as the clock loop sees it, in frames.
    [[nodiscard]] double queued_frames() const noexcept {
        return queued_.load(std::memory_order_relaxed);
    }

private:
    SourceRelay(std::string name, Stream& record, Stream& playback, uint32_t target_frames,
                uint32_t source_quantum, uint32_t sink_quantum);
    void run(int rt_priority) noexcept;
    // Resamples `count` recorded frames into the playback ring; `pending`
    // more are recorded and follow at once.
    void deliver(const float* frames, uint32_t count, uint64_t pending) noexcept;
    // The queue ran dry: queues silence up to the target, less the `coming`
    // frames about to be delivered. Returns the silence queued.
    uint64_t refill(uint64_t coming) noexcept;

    std::string name_;
    Stream& record_;
    Stream& playback_;
    const uint32_t channels_;
    const uint32_t target_;
    const uint32_t sink_quantum_;
    const uint64_t overfilled_; // a queue above this is dropped back to the target
    const uint32_t chunk_;      // frames taken from the record ring at a time
    std::vector<float> in_;
    std::vector<float> out_;
    DriftResampler resampler_;
    ClockFollower follower_;
    uint64_t read_ = 0;    // our position in the record ring
    uint64_t written_ = 0; // our position in the playback ring
    bool started_ = false;
    uint64_t last_consumed_ = 0; // the sink's position at the last delivery
    uint64_t unconsumed_ = 0;    // frames delivered since it last moved
    bool skipping_ = false;      // dropping input until the queue is back at the target

    UniqueFd stop_fd_;
    std::atomic<bool> stop_{false};
    std::atomic<double> ratio_{1};
    std::atomic<double> queued_{0};
    std::atomic<uint64_t> resyncs_{0};
    std::atomic<uint64_t> refills_{0};
    std::atomic<uint64_t> restarts_{0};
    std::thread thread_;
};

} // namespace audiod
