// When a sender means each of its frames to be heard: the map from its RTP
// timeline to the wall clock, learnt from its RTCP sender reports (each
// ties one RTP time to the wall time its frame was due, rtp_sender.h).
// Every receiver of the stream that plays a frame at its wall time plus
// the same link offset plays it at the same moment as the others; the
// receivers' wall clocks must agree (NTP, or PTP disciplining them).
//
// The map is a line through the recent reports: a least-squares fit of
// wall time against position over the last kWindow reports once they span
// kMinSpanSeconds (before that, the nominal rate through the latest one),
// so a sender whose clock runs off its rate is followed and one report's
// jitter is averaged away. A fit more than kMaxPpm off the nominal rate is
// not believed (a report from before a jump in the sender's timeline) and
// the history restarts from the latest report.
//
// Positions are the receiver's playout-buffer positions (the sender's
// frames since the session began). Thread: one owner (the receiving
// thread); the fitted map is published for the rt thread to read.
#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>

namespace audiod::rtp {

struct SenderTimeline {
    bool valid = false;
    double position = 0;     // a position on the sender's timeline ...
    int64_t wall_ns = 0;     // ... and the wall time (CLOCK_REALTIME) it is due
    double ns_per_frame = 0; // the sender's pace in wall time
    uint32_t reports = 0;    // how many reports the map rests on

    // When `at` is due, on the wall clock.
    [[nodiscard]] double wall_at(double at) const noexcept {
        return static_cast<double>(wall_ns) + (at - position) * ns_per_frame;
    }
};

class SenderClock {
public:
    static constexpr size_t kWindow = 16;
    static constexpr double kMinSpanSeconds = 2;
    static constexpr double kMaxPpm = 1000;

    explicit SenderClock(uint32_t rate) noexcept
        : nominal_ns_per_frame_(1e9 / rate) {}

    // A report: `position` was due at `wall_ns`.
    void add(int64_t position, int64_t wall_ns);
    // A new session: what was learnt is another sender's.
    void clear() noexcept { reports_.clear(); }
    [[nodiscard]] SenderTimeline timeline() const noexcept;

private:
    struct Report {
        int64_t position;
        int64_t wall_ns;
    };
    double nominal_ns_per_frame_;
    std::deque<Report> reports_;
};

} // namespace audiod::rtp
