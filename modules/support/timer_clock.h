// A sink clock for devices that have none (null, file, network): sleeps to
// absolute CLOCK_MONOTONIC deadlines computed from a frame count, so the
// clock does not drift however long it runs — every deadline is
// start + frames / rate exactly, never "previous deadline + period".
// Thread: rt (start, wait); xruns() from any thread.
#pragma once

#include <atomic>
#include <cstdint>
#include <ctime>

namespace audiod {

class TimerClock {
public:
    // Falling further behind than this (a suspended machine, a stopped
    // process) restarts the timeline instead of rushing to catch up.
    static constexpr int64_t kMaxLateNs = 250'000'000;

    TimerClock(uint32_t rate, uint32_t quantum) noexcept
        : rate_(rate)
        , quantum_(quantum) {}

    void start() noexcept;
    // Sleeps until the next quantum is due. Returns 0 (or -errno if the
    // clock itself fails). A cycle that wakes more than a quantum after its
    // deadline counts as an xrun (once per late episode).
    int wait() noexcept;
    [[nodiscard]] uint64_t xruns() const noexcept { return xruns_.load(std::memory_order_relaxed); }

    // Nanoseconds from the timeline's start to `frames` (exact, no overflow
    // for centuries of audio). Public for its unit test.
    [[nodiscard]] static int64_t frames_to_ns(uint64_t frames, uint32_t rate) noexcept;

private:
    uint32_t rate_;
    uint32_t quantum_;
    timespec base_{};
    uint64_t frames_ = 0;
    bool behind_ = false;
    std::atomic<uint64_t> xruns_{0};
};

} // namespace audiod
