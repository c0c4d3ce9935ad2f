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
// Timed. A source that stamps its frames with when they are to be heard
// (an RTP source with link-offset-ms: every room of a stream at the same
// moment) is played at those times. Both streams publish, each cycle, a
// frame and when it is heard (device/time_anchor.h): the record
// stream's says when its source means it to be heard, the playback
// stream's when its sink will play it. Before writing, the relay knows
// when the next frame it writes will be heard, and when the input frame
// it would write there is due: their difference is the error. Over
// kRealignMs (at the start, after a pause of the sink, a receiver that
// fell behind), or moved by over kStepMs since the last delivery (a step
// in either timeline: a new sender), the relay re-aligns at once, skipping
// input or queueing silence, with a short fade out and in; else a PI loop steers the
// resampler's ratio so that the error goes to zero and stays there, which
// also follows a sink whose clock runs off the sender's. Untimed cycles
// (the sender not yet heard from) play as below until timing comes.
//
// Thread: the relay's own, at the server's RT priority (it is in the
// audio path); it never allocates, locks or waits for the control thread.
// The control thread creates and destroys the relay; the streams must
// outlive it.
#pragma once

#include "common/clock_follower.h"
#include "common/drift_resampler.h"
#include "device/time_anchor.h"
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
    // Whether the source's frames are played at their stamped times, how
    // far off the last frame written was (µs, + late), and how often the
    // relay re-aligned once it had been in step.
    [[nodiscard]] bool timed() const noexcept { return timed_now_.load(std::memory_order_relaxed); }
    [[nodiscard]] double sync_error_us() const noexcept {
        return sync_error_us_.load(std::memory_order_relaxed);
    }
    [[nodiscard]] uint64_t realigns() const noexcept {
        return realigns_.load(std::memory_order_relaxed);
    }

    // An error larger than this is corrected at once (a skip or silence,
    // faded), a smaller one by the ratio.
    static constexpr double kRealignMs = 5;
    // So is an error that moved by more than this since the last delivery:
    // the ratio moves it by microseconds a delivery, so a jump is a step
    // in a timeline (a new sender, a receiver that re-aligned its reader),
    // which the loop would take seconds to work off.
    static constexpr double kStepMs = 1;

private:
    SourceRelay(std::string name, Stream& record, Stream& playback, uint32_t target_frames,
                uint32_t source_quantum, uint32_t sink_quantum);
    void run(int rt_priority) noexcept;
    // Resamples `count` recorded frames, from record position `first`,
    // into the playback ring; `pending` more are recorded and follow at once.
    void deliver(const float* frames, uint32_t count, uint64_t first, uint64_t pending) noexcept;
    // The queue ran dry: queues silence up to the target, less the `coming`
    // frames about to be delivered. Returns the silence queued.
    uint64_t refill(uint64_t coming) noexcept;
    // The timed way (above): `count` recorded frames starting at record
    // position `first`, with `source` the record stream's last anchor.
    void deliver_timed(const float* frames, uint32_t count, uint64_t first,
                       const TimeAnchor& source) noexcept;
    // How late (ns, into error_ns) the next frame written will be heard
    // against when it is due; false until the sink has played the stream.
    [[nodiscard]] bool timing_error(const TimeAnchor& source, double& error_ns) const noexcept;
    // Corrects an error at once: skips input, or queues silence.
    void realign(double error_ns) noexcept;
    // Writes `produced` frames of out_ to the playback ring, fading them in
    // where a re-alignment left off.
    void write_out(uint32_t produced) noexcept;

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
    // Timed: the record position just past the last frame given to the
    // resampler, input still to skip, the loop's integral, whether it has
    // been in step (and started from the paces), and how many frames are
    // left to fade in.
    uint64_t input_end_ = 0;
    uint64_t skip_input_ = 0;
    double integral_ = 0;
    bool locked_ = false;
    bool paced_ = false;       // the integral starts from the two paces, once known
    double last_error_ns_ = 0; // the error the last delivery left (locked only)
    uint32_t fade_in_left_ = 0;

    UniqueFd stop_fd_;
    std::atomic<bool> stop_{false};
    std::atomic<double> ratio_{1};
    std::atomic<double> queued_{0};
    std::atomic<uint64_t> resyncs_{0};
    std::atomic<uint64_t> refills_{0};
    std::atomic<uint64_t> restarts_{0};
    std::atomic<bool> timed_now_{false};
    std::atomic<double> sync_error_us_{0};
    std::atomic<uint64_t> realigns_{0};
    std::thread thread_;
};

} // namespace audiod
