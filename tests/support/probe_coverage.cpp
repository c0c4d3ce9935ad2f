#include "support/probe_coverage.h"

#include <cmath>

namespace audiod::test {

namespace {

// Indices this close to the ramp's wrap are not counted: a frame there is
// not read (sync_probe.cpp's guard), with a margin for a fade's edge.
constexpr uint64_t kWrapMargin = 16;

bool near_wrap(uint64_t index) {
    const uint64_t within = index % kRampPeriod;
    return within < kWrapMargin || within >= kRampPeriod - kWrapMargin;
}

// Adds `index` to the runs: it extends the last one if it follows it.
void add_to_runs(std::vector<std::pair<uint64_t, uint64_t>>& runs, uint64_t index) {
    if (!runs.empty() && runs.back().second + 1 == index) {
        runs.back().second = index;
    } else if (runs.size() < Coverage::kRanges) {
        runs.emplace_back(index, index);
    }
}

} // namespace

Coverage count_coverage(const std::vector<RoomRecording>& rooms, uint64_t frames) {
    Coverage coverage;
    std::vector<uint8_t> seen(frames, 0);
    const auto count = [&](int64_t first, int64_t end) {
        for (int64_t i = first; i < end; ++i) {
            if (i < 0 || i >= static_cast<int64_t>(frames)) {
                ++coverage.outside;
                continue;
            }
            uint8_t& n = seen[static_cast<size_t>(i)];
            n = static_cast<uint8_t>(n < 255 ? n + 1 : 255);
        }
    };
    for (const RoomRecording& room : rooms) {
        RoomTimeline timeline;
        const std::vector<double> index = read_indices(room, timeline);
        // A frame carries the source from half an index before it to where
        // the next frame's half begins: a resampled room's indices are
        // fractions, and each source index lies in one frame's span. The
        // last frame of a run spans one index.
        for (size_t x = 0; x < index.size(); ++x) {
            if (std::isnan(index[x])) {
                continue;
            }
            const bool next = x + 1 < index.size() && !std::isnan(index[x + 1]) &&
                              index[x + 1] - index[x] > 0.5 && index[x + 1] - index[x] < 1.5;
            const double end = next ? index[x + 1] - 0.5 : index[x] + 0.5;
            count(static_cast<int64_t>(std::ceil(index[x] - 0.5)),
                  static_cast<int64_t>(std::ceil(end)));
        }
    }
    for (uint64_t i = 0; i < frames; ++i) {
        if (near_wrap(i)) {
            continue;
        }
        ++coverage.checked;
        if (seen[i] == 0) {
            if (coverage.missing++ == 0) {
                coverage.first_missing = static_cast<int64_t>(i);
            }
            add_to_runs(coverage.missing_runs, i);
        } else if (seen[i] > 1) {
            if (coverage.repeated++ == 0) {
                coverage.first_repeated = static_cast<int64_t>(i);
            }
            add_to_runs(coverage.repeated_runs, i);
        }
    }
    return coverage;
}

} // namespace audiod::test
