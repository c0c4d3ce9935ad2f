// What of each numbered stream (numbered_frames.h) arrived at the sinks,
// read from each sink's recording (its monitor), and the verdict: every
// sample once and in order, gaps only where something explains them.
//
// A sink's recording is read frame by frame. Frames that carry the next
// number of the stream playing there extend its run; silence (an
// underrun, a stopped client, a muted stream) leaves a run open. Other
// frames are unreadable (at a gain other than unity, where a volume
// changes) unless kConfirm of them in a row carry consecutive numbers of
// one stream: then they start a new run (a stream moved in, or the same
// one after a gap). Unreadable frames are counted, and a run continues
// past them when the next readable frame's number is the last one plus
// the unreadable frames plus one (none lost in between).
//
// At the end each stream's runs, from every sink, must tile its numbers:
// a run beginning where the last ended is a clean hand-over (a move); a
// run beginning later is a gap (samples lost), one beginning earlier is
// an overlap (samples played twice). Gaps are matched against the causes
// the caller records (a muted stream's frames are played as silence and
// so missing; a killed client's last ones never came).
//
// Thread: one ledger per sink, each on its own thread; `latest` is shared.
#pragma once

#include "support/numbered_frames.h"

#include <array>
#include <atomic>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace audiod::test {

struct Run {
    uint32_t stream = 0;
    std::string sink;
    uint64_t first = 0; // the first and last frame numbers of the run
    uint64_t last = 0;
    double first_s = 0; // when they were read (seconds into the soak)
    double last_s = 0;
    uint64_t unreadable = 0; // frames within it at another gain
};

// The highest number read of each stream, from any sink: the reference
// for unwrapping numbers.
using LatestNumbers = std::array<std::atomic<uint64_t>, kMaxNumberedStream + 1>;

class SinkLedger {
public:
    static constexpr uint64_t kConfirm = 8;

    SinkLedger(std::string sink, LatestNumbers& latest)
        : sink_(std::move(sink))
        , latest_(latest) {}

    // The next `count` stereo s16 frames the sink played, read at `at_s`.
    void feed(const int16_t* frames, size_t count, double at_s);
    // Closes the open run (at the end of the recording).
    void finish();

    [[nodiscard]] const std::vector<Run>& runs() const { return runs_; }
    [[nodiscard]] uint64_t frames_read() const { return frames_; }
    [[nodiscard]] uint64_t silent_frames() const { return silent_; }
    // Unreadable frames no run took (not followed by their stream's next
    // number: at the end of a run, or a mix of two streams).
    [[nodiscard]] uint64_t stray_frames() const { return stray_; }

private:
    void take(uint32_t stream, uint64_t wrapped, double at_s);
    void unreadable(uint64_t frames);
    void close_run();
    void drop_candidate();

    std::string sink_;
    LatestNumbers& latest_;
    std::optional<Run> run_;
    uint64_t pending_ = 0; // unreadable frames since the run's last
    // Frames that may start a run, until kConfirm of them agree.
    struct Candidate {
        uint32_t stream = 0;
        uint64_t first = 0; // wrapped
        uint64_t count = 0;
        double at_s = 0;
    };
    std::optional<Candidate> candidate_;
    std::vector<Run> runs_;
    uint64_t frames_ = 0, silent_ = 0, stray_ = 0;
};

// Why a stream's samples may be missing over a while.
struct Cause {
    uint32_t stream = 0; // 0: every stream on `sink` (or everywhere, if empty)
    std::string sink;
    double from_s = 0, to_s = 0;
    std::string what;
};

struct Gap {
    uint32_t stream = 0;
    uint64_t after = 0; // the last number before it
    uint64_t frames = 0;
    double from_s = 0, to_s = 0;
    std::string cause; // empty: none explains it
};

struct Overlap {
    uint32_t stream = 0;
    uint64_t from = 0;
    uint64_t frames = 0;
    double at_s = 0;
};

struct Verdict {
    uint64_t frames_checked = 0; // numbers seen, each once
    uint64_t unreadable = 0;     // within runs: checked by count, not value
    uint64_t hand_overs = 0;     // a run on one sink continued on another
    std::vector<Gap> gaps;
    std::vector<Overlap> overlaps;
    [[nodiscard]] uint64_t lost_without_cause() const;
    [[nodiscard]] const Gap* worst_without_cause() const;
};

// Merges every sink's runs. `slack_s`: how far outside a cause's times a
// gap it explains may reach (reading lags playing).
Verdict judge(const std::vector<Run>& runs, const std::vector<Cause>& causes, double slack_s);

} // namespace audiod::test
