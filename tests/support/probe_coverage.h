// Whether several rooms' recordings together hold each of the probe's
// samples exactly once: a stream moved from one sink to another (a room,
// a group) while it played loses none and plays none twice across the
// move. Each index is counted in every recording that carries it
// (support/sync_probe.h read_indices); the few frames about each of the
// ramp's wraps, which a reading cannot place, are left out of the count.
// Thread: any (pure functions).
#pragma once

#include "support/sync_probe.h"

#include <cstdint>
#include <utility>
#include <vector>

namespace audiod::test {

struct Coverage {
    uint64_t checked = 0;  // indices of [0, frames) counted (away from the wraps)
    uint64_t missing = 0;  // of those, in no recording
    uint64_t repeated = 0; // in more than one, or twice in one
    uint64_t outside = 0;  // frames whose index is not in [0, frames)
    // The first missing and repeated indices, for a message, and the
    // first kRanges runs of each, [first, last].
    static constexpr size_t kRanges = 8;
    int64_t first_missing = -1;
    int64_t first_repeated = -1;
    std::vector<std::pair<uint64_t, uint64_t>> missing_runs;
    std::vector<std::pair<uint64_t, uint64_t>> repeated_runs;
};

// Counts the indices of a probe of `frames` frames in `rooms`.
[[nodiscard]] Coverage count_coverage(const std::vector<RoomRecording>& rooms, uint64_t frames);

} // namespace audiod::test
