// Monotonic-clock deadlines: every wait in audiod takes one.
#pragma once

#include <algorithm>
#include <chrono>
#include <cstdint>

namespace audiod {

using MonoClock = std::chrono::steady_clock;

class Deadline {
public:
    // A deadline `timeout_ms` from now; negative means "never" (only for
    // callers that have their own bound elsewhere).
    static Deadline after_ms(int64_t timeout_ms) noexcept {
        Deadline d;
        if (timeout_ms < 0) {
            d.infinite_ = true;
        } else {
            d.at_ = MonoClock::now() + std::chrono::milliseconds(timeout_ms);
        }
        return d;
    }

    [[nodiscard]] bool expired() const noexcept { return !infinite_ && MonoClock::now() >= at_; }

    // Milliseconds left, rounded up, for poll(2); -1 when infinite.
    [[nodiscard]] int poll_timeout_ms() const noexcept {
        if (infinite_) {
            return -1;
        }
        const auto left = at_ - MonoClock::now();
        if (left <= MonoClock::duration::zero()) {
            return 0;
        }
        const auto ms = std::chrono::ceil<std::chrono::milliseconds>(left).count();
        return ms > 1'000'000'000 ? 1'000'000'000 : static_cast<int>(ms);
    }

    // Time left (zero once passed); duration::max() when infinite.
    [[nodiscard]] MonoClock::duration left() const noexcept {
        if (infinite_) {
            return MonoClock::duration::max();
        }
        return std::max(at_ - MonoClock::now(), MonoClock::duration::zero());
    }

private:
    MonoClock::time_point at_{};
    bool infinite_ = false;
};

} // namespace audiod
