// A sink clock for devices that have none (null, file, network): sleeps to
// absolute CLOCK_MONOTONIC deadlines computed from a frame count, so the
// clock does not drift however long it runs — every deadline is
// start + frames / rate exactly, never "previous deadline + period".
// What happens after a late cycle is the owner's choice (AfterXrun). A
// ClockDrift makes it run off the nominal rate, as a card's crystal does:
// the timeline then goes in segments of a second, each at the speed the
// drift gives at its start.
// Thread: rt (start, wait); xruns() from any thread.
#pragma once

#include "clock_drift.h"

#include <atomic>
#include <cstdint>
#include <ctime>

namespace audiod {

class TimerClock {
public:
    // A cycle that starts more than a quantum late is an xrun. A sound card
    // that the null and file sinks stand in for loses that time (it ran dry
    // and is restarted), so its clock restarts the timeline from now: it
    // does not then take several quanta back to back, which would drain
    // every client's buffer at once and turn one late cycle of the server
    // into an underrun of each stream. A network stream is paced by its far
    // end's playout, so its clock catches up instead, keeping the media
    // time on the wall clock.
    enum class AfterXrun { restart, catch_up };

    // Falling further behind than this (a suspended machine, a stopped
    // process) restarts the timeline even when catching up.
    static constexpr int64_t kMaxLateNs = 250'000'000;

    TimerClock(uint32_t rate, uint32_t quantum, AfterXrun after_xrun,
               ClockDrift drift = {}) noexcept
        : rate_(rate)
        , quantum_(quantum)
        , after_xrun_(after_xrun)
        , drift_(drift) {}

    void start() noexcept;
    // Sleeps until the next quantum is due. Returns 0 (or -errno if the
    // clock itself fails). A cycle that wakes more than a quantum after its
    // deadline counts as an xrun (once per late episode when catching up).
    int wait() noexcept;
    [[nodiscard]] uint64_t xruns() const noexcept { return xruns_.load(std::memory_order_relaxed); }

    // When the next wait() is due (CLOCK_MONOTONIC ns): where the timeline
    // stands. Public for the unit test.
    [[nodiscard]] int64_t next_due_ns() const noexcept;
    // When the cycle that the last wait() began was due (CLOCK_MONOTONIC
    // ns): the time its quantum starts to play. After a late cycle of a
    // clock that restarts, the time it woke.
    [[nodiscard]] int64_t cycle_due_ns() const noexcept { return cycle_due_ns_; }
    // How many times the timeline restarted from now (late cycles).
    [[nodiscard]] uint64_t restarts() const noexcept { return restarts_; }

    // Nanoseconds from the timeline's start to `frames` (exact, no overflow
    // for centuries of audio). Public for its unit test.
    [[nodiscard]] static int64_t frames_to_ns(uint64_t frames, uint32_t rate) noexcept;

private:
    // Nanoseconds that `frames` past the segment's start take.
    [[nodiscard]] int64_t span_ns(uint64_t frames) const noexcept;
    // Starts a new segment of the timeline at frame frames_, due at `due`.
    void begin_segment(int64_t due) noexcept;

    uint32_t rate_;
    uint32_t quantum_;
    AfterXrun after_xrun_;
    ClockDrift drift_;
    int64_t start_ns_ = 0;
    // The timeline: frame segment_frames_ is due at segment_ns_, and the
    // frames after it at speed_.
    int64_t segment_ns_ = 0;
    uint64_t segment_frames_ = 0;
    double speed_ = 1;
    uint64_t frames_ = 0;
    int64_t cycle_due_ns_ = 0;
    uint64_t restarts_ = 0;
    bool behind_ = false;
    std::atomic<uint64_t> xruns_{0};
};

// The clock calls of a device that a TimerClock paces (null, file and the
// network's): it derives from this, and module_ops.h finds its start_rt,
// wait_rt and xruns here.
class TimerPaced {
public:
    TimerPaced(uint32_t rate, uint32_t quantum, TimerClock::AfterXrun after_xrun,
               ClockDrift drift = {}) noexcept
        : clock_(rate, quantum, after_xrun, drift) {}

    // Thread: rt.
    int start_rt() noexcept {
        clock_.start();
        return 0;
    }
    int wait_rt() noexcept { return clock_.wait(); }
    // The cycle's frames play when it was due: a timer's device has no
    // delay of its own. (A network source's playout time is its own.)
    [[nodiscard]] int64_t media_time_rt() const noexcept { return clock_.cycle_due_ns(); }

    // Thread: any.
    [[nodiscard]] uint64_t xruns() const noexcept { return clock_.xruns(); }

protected:
    // Thread: rt.
    [[nodiscard]] const TimerClock& clock() const noexcept { return clock_; }

private:
    TimerClock clock_;
};

} // namespace audiod
