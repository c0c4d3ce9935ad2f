#include "sender_clock.h"

#include <cmath>

namespace audiod::rtp {

void SenderClock::add(int64_t position, int64_t wall_ns) {
    if (!reports_.empty() && position <= reports_.back().position) {
        reports_.clear(); // the sender's timeline went back: start again
    }
    reports_.push_back({position, wall_ns});
    if (reports_.size() > kWindow) {
        reports_.pop_front();
    }
    const SenderTimeline fitted = timeline();
    if (std::fabs(fitted.ns_per_frame / nominal_ns_per_frame_ - 1) > kMaxPpm * 1e-6) {
        const Report latest = reports_.back();
        reports_.clear();
        reports_.push_back(latest);
    }
}

SenderTimeline SenderClock::timeline() const noexcept {
    SenderTimeline t;
    if (reports_.empty()) {
        return t;
    }
    t.valid = true;
    t.reports = static_cast<uint32_t>(reports_.size());
    const Report& latest = reports_.back();
    const double span_ns = static_cast<double>(latest.wall_ns - reports_.front().wall_ns);
    if (reports_.size() < 2 || span_ns < kMinSpanSeconds * 1e9) {
        t.position = static_cast<double>(latest.position);
        t.wall_ns = latest.wall_ns;
        t.ns_per_frame = nominal_ns_per_frame_;
        return t;
    }
    // Least squares about the latest report, so the sums stay small.
    double sx = 0, sy = 0, sxx = 0, sxy = 0;
    for (const Report& r : reports_) {
        const auto x = static_cast<double>(r.position - latest.position);
        const auto y = static_cast<double>(r.wall_ns - latest.wall_ns);
        sx += x;
        sy += y;
        sxx += x * x;
        sxy += x * y;
    }
    const auto n = static_cast<double>(reports_.size());
    const double slope = (n * sxy - sx * sy) / (n * sxx - sx * sx);
    const double intercept = (sy - slope * sx) / n;
    t.position = static_cast<double>(latest.position);
    t.wall_ns = latest.wall_ns + static_cast<int64_t>(std::llround(intercept));
    t.ns_per_frame = slope;
    return t;
}

} // namespace audiod::rtp
