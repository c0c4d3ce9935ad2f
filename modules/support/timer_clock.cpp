#include "timer_clock.h"

#include <cerrno>

namespace audiod {

namespace {

constexpr int64_t kNsPerSecond = 1'000'000'000;

int64_t to_ns(const timespec& t) noexcept {
    return int64_t{t.tv_sec} * kNsPerSecond + t.tv_nsec;
}

timespec from_ns(int64_t ns) noexcept {
    return timespec{static_cast<time_t>(ns / kNsPerSecond), static_cast<long>(ns % kNsPerSecond)};
}

} // namespace

int64_t TimerClock::frames_to_ns(uint64_t frames, uint32_t rate) noexcept {
    const uint64_t seconds = frames / rate;
    const uint64_t rest = frames % rate; // < rate, so rest * 1e9 fits easily
    return static_cast<int64_t>(seconds) * kNsPerSecond +
           static_cast<int64_t>(rest * kNsPerSecond / rate);
}

int64_t TimerClock::next_due_ns() const noexcept {
    return to_ns(base_) + frames_to_ns(frames_, rate_);
}

void TimerClock::start() noexcept {
    clock_gettime(CLOCK_MONOTONIC, &base_);
    frames_ = 0;
}

int TimerClock::wait() noexcept {
    const int64_t due = next_due_ns();
    timespec now{};
    clock_gettime(CLOCK_MONOTONIC, &now);
    const int64_t late = to_ns(now) - due;
    // A cycle that starts after its whole quantum has passed missed its
    // deadline: one xrun per such episode, not one per catch-up cycle.
    const bool behind = late > frames_to_ns(quantum_, rate_);
    if (late > kMaxLateNs || (behind && after_xrun_ == AfterXrun::restart)) {
        // This cycle runs now and the next a quantum from now.
        xruns_.fetch_add(1, std::memory_order_relaxed);
        base_ = now;
        frames_ = quantum_;
        behind_ = false;
        return 0;
    }
    if (behind && !behind_) {
        xruns_.fetch_add(1, std::memory_order_relaxed);
    }
    behind_ = behind;
    const timespec deadline = from_ns(due);
    int rc = 0;
    while ((rc = clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &deadline, nullptr)) == EINTR) {
    }
    frames_ += quantum_;
    return rc == 0 ? 0 : -rc;
}

} // namespace audiod
