#include "timer_clock.h"

#include <cerrno>
#include <cmath>

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

int64_t TimerClock::span_ns(uint64_t frames) const noexcept {
    if (speed_ == 1) {
        return frames_to_ns(frames, rate_);
    }
    // A segment is about a second long, so a double is exact to well under
    // a nanosecond here.
    return static_cast<int64_t>(std::llround(static_cast<double>(frames) * 1e9 / (rate_ * speed_)));
}

int64_t TimerClock::next_due_ns() const noexcept {
    return segment_ns_ + span_ns(frames_ - segment_frames_);
}

void TimerClock::begin_segment(int64_t due) noexcept {
    segment_ns_ = due;
    segment_frames_ = frames_;
    speed_ = drift_.none() ? 1 : drift_.speed_at(static_cast<double>(due - start_ns_) / 1e9);
}

void TimerClock::start() noexcept {
    timespec now{};
    clock_gettime(CLOCK_MONOTONIC, &now);
    start_ns_ = to_ns(now);
    frames_ = 0;
    begin_segment(start_ns_);
}

int TimerClock::wait() noexcept {
    const int64_t due = next_due_ns();
    timespec now{};
    clock_gettime(CLOCK_MONOTONIC, &now);
    const int64_t late = to_ns(now) - due;
    // A cycle that starts after its whole quantum has passed missed its
    // deadline: one xrun per such episode, not one per catch-up cycle.
    const bool behind = late > span_ns(quantum_);
    if (late > kMaxLateNs || (behind && after_xrun_ == AfterXrun::restart)) {
        // This cycle runs now and the next a quantum from now.
        xruns_.fetch_add(1, std::memory_order_relaxed);
        ++restarts_;
        frames_ = 0;
        begin_segment(to_ns(now));
        cycle_due_ns_ = segment_ns_;
        frames_ = quantum_;
        behind_ = false;
        return 0;
    }
    if (behind && !behind_) {
        xruns_.fetch_add(1, std::memory_order_relaxed);
    }
    behind_ = behind;
    cycle_due_ns_ = due;
    const timespec deadline = from_ns(due);
    int rc = 0;
    while ((rc = clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &deadline, nullptr)) == EINTR) {
    }
    frames_ += quantum_;
    if (!drift_.none() && frames_ - segment_frames_ >= rate_) {
        begin_segment(next_due_ns());
    }
    return rc == 0 ? 0 : -rc;
}

} // namespace audiod
