// The clock a stream keeps by itself while no server consumes it.
//
// When the server stops (SIGSTOP, a hung machine) or dies, libaudiod goes on
// accepting writes and "consumes" them at the stream's nominal rate, so a
// player's position, delay and blocking writes behave as if it were still
// playing: its timeline never freezes. The consumer is virtual: frames
// written meanwhile are dropped. A paused stream's virtual consumer stops.
// Plain arithmetic, no locking: StreamCore's mutex guards it.
#pragma once

#include "protocol/deadline.h"

#include <cstdint>

namespace audiod::client {

class KeepClock {
public:
    KeepClock() = default;
    // Starts consuming at `rate` from `consumed` frames, as of `since`
    // (which may lie in the past: the moment the server stopped).
    KeepClock(MonoClock::time_point since, uint64_t consumed, uint32_t rate, bool paused) noexcept
        : since_(since)
        , consumed_(consumed)
        , rate_(rate)
        , paused_(paused) {}

    // Frames consumed by `now`, never more than were written: a consumer
    // that ran dry waits for new frames instead of owing them.
    [[nodiscard]] uint64_t consumed(MonoClock::time_point now, uint64_t written) noexcept {
        uint64_t total = consumed_;
        if (!paused_ && now > since_) {
            // Whole seconds and the rest apart: exact, and no overflow for
            // any length of time.
            const auto ns = static_cast<uint64_t>(
                std::chrono::duration_cast<std::chrono::nanoseconds>(now - since_).count());
            total += ns / 1'000'000'000 * rate_ + ns % 1'000'000'000 * rate_ / 1'000'000'000;
        }
        if (total >= written) {
            // Ran dry: restart from here so later frames are not consumed at once.
            consumed_ = written;
            since_ = now;
            return written;
        }
        return total;
    }

    void pause(MonoClock::time_point now, uint64_t written) noexcept {
        consumed_ = consumed(now, written);
        since_ = now;
        paused_ = true;
    }

    void resume(MonoClock::time_point now) noexcept {
        since_ = now;
        paused_ = false;
    }

    // How long until `frames` more frames will have been consumed.
    [[nodiscard]] std::chrono::nanoseconds time_for(uint64_t frames) const noexcept {
        if (rate_ == 0 || paused_) {
            return std::chrono::milliseconds(50);
        }
        return std::chrono::nanoseconds(frames * 1'000'000'000 / rate_);
    }

private:
    MonoClock::time_point since_{};
    uint64_t consumed_ = 0;
    uint32_t rate_ = 0;
    bool paused_ = false;
};

} // namespace audiod::client
