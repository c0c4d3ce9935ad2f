// A sink clock for devices that have none (null, file, network): sleeps to
// absolute CLOCK_MONOTONIC deadlines computed from a frame count, so the
// clock does not drift however long it runs — every deadline is
// start + frames / rate exactly, never "previous deadline + period".
// What happens after a late cycle is the owner's choice (AfterXrun).
// Thread: rt (start, wait); xruns() from any thread.
#pragma once

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

    TimerClock(uint32_t rate, uint32_t quantum, AfterXrun after_xrun) noexcept
        : rate_(rate)
        , quantum_(quantum)
        , after_xrun_(after_xrun) {}

    void start() noexcept;
    // Sleeps until the next quantum is due. Returns 0 (or -errno if the
    // clock itself fails). A cycle that wakes more than a quantum after its
    // deadline counts as an xrun (once per late episode when catching up).
    int wait() noexcept;
    [[nodiscard]] uint64_t xruns() const noexcept { return xruns_.load(std::memory_order_relaxed); }

    // When the next wait() is due (CLOCK_MONOTONIC ns): where the timeline
    // stands. Public for the unit test.
    [[nodiscard]] int64_t next_due_ns() const noexcept;

    // Nanoseconds from the timeline's start to `frames` (exact, no overflow
    // for centuries of audio). Public for its unit test.
    [[nodiscard]] static int64_t frames_to_ns(uint64_t frames, uint32_t rate) noexcept;

private:
    uint32_t rate_;
    uint32_t quantum_;
    AfterXrun after_xrun_;
    timespec base_{};
    uint64_t frames_ = 0;
    bool behind_ = false;
    std::atomic<uint64_t> xruns_{0};
};

// The clock calls of a device that a TimerClock paces (null, file and the
// network's): it derives from this, and module_ops.h finds its start_rt,
// wait_rt and xruns here.
class TimerPaced {
public:
    TimerPaced(uint32_t rate, uint32_t quantum, TimerClock::AfterXrun after_xrun) noexcept
        : clock_(rate, quantum, after_xrun) {}

    // Thread: rt.
    int start_rt() noexcept {
        clock_.start();
        return 0;
    }
    int wait_rt() noexcept { return clock_.wait(); }

    // Thread: any.
    [[nodiscard]] uint64_t xruns() const noexcept { return clock_.xruns(); }

private:
    TimerClock clock_;
};

} // namespace audiod
