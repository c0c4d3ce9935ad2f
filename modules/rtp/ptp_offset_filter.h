// What a room follows of a free-running ptp4l's answers (ptp_follower.h).
//
// Why a filter: such a ptp4l reports the offset its last Sync measured,
// alone and unsmoothed. On a quiet network those wander by some µs; now
// and then one is far off (a Sync held in a switch or a busy host, a
// Follow_Up matched to the wrong Sync), and following it would move every
// sample the room plays by as much. So:
//   - a measure within kConfirmNs of the offset held is followed a quarter
//     of the way (noise averages out over a few seconds);
//   - one further off is held back until the next agrees with it (within
//     kConfirmNs): a lone outlier is dropped and counted, while a real
//     change (a new grandmaster, a stepped clock) costs one more answer;
//   - a confirmed change of over kStepNs is taken at once, a smaller one a
//     quarter of the way.
// Thread: one (the follower's own).
#pragma once

#include <cstdint>
#include <optional>

namespace audiod::rtp {

class PtpOffsetFilter {
public:
    static constexpr int64_t kConfirmNs = 100'000;
    static constexpr int64_t kStepNs = 1'000'000;

    // Takes a new measure; returns the offset to follow from now on.
    int64_t take(int64_t measured_ns) noexcept;

    [[nodiscard]] std::optional<int64_t> held() const noexcept { return held_; }
    // Measures dropped as outliers so far.
    [[nodiscard]] uint64_t outliers() const noexcept { return outliers_; }

private:
    std::optional<int64_t> held_;
    std::optional<int64_t> doubted_; // a far measure awaiting its confirmation
    uint64_t outliers_ = 0;
};

} // namespace audiod::rtp
