#include "support/sync_probe.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <sstream>

namespace audiod::test {

namespace {

constexpr double kNan = std::numeric_limits<double>::quiet_NaN();
// A run of this many frames with both channels at exactly zero is silence:
// nothing of the probe was playing (a lone zero is a ramp passing 32768
// while the programme is between bursts).
constexpr size_t kSilentRun = 32;
// A sink's clock is within 1 % of its rate (clock-ppm's range); a pace
// further off than this between two marks is a jump in time.
constexpr double kMaxPaceError = 0.02;

uint64_t mix64(uint64_t x) {
    x += 0x9e3779b97f4a7c15ull;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
    return x ^ (x >> 31);
}

// The programme's noise: burst `burst`, its frame `k`, in 16-bit steps at
// half of full scale.
int16_t noise_s16(uint64_t burst, uint64_t k) {
    const auto bits = static_cast<int32_t>(mix64(burst << 20 | k) >> 48); // 0 .. 65535
    return static_cast<int16_t>((bits - 32768) / 2);
}

// When the recording's (fractional) frame x played, from its marks: the
// piece of the timeline it falls in, at the pace from its mark to the
// next. A mark where the timeline restarted (a late cycle) or frames were
// dropped ends a piece with a jump in time: the pace across it is far off
// the nominal, and the piece keeps the pace of the one before.
class TrueClock {
public:
    TrueClock(const std::vector<PlayMark>& marks, uint32_t rate)
        : marks_(marks)
        , nominal_(1e9 / rate) {
        slopes_.resize(marks.size(), nominal_);
        double last = nominal_;
        for (size_t i = 0; i < marks.size(); ++i) {
            if (i + 1 < marks.size() && marks[i + 1].frame > marks[i].frame) {
                const double pace = static_cast<double>(marks[i + 1].ns - marks[i].ns) /
                                    static_cast<double>(marks[i + 1].frame - marks[i].frame);
                if (std::fabs(pace / nominal_ - 1) < kMaxPaceError) {
                    last = pace;
                }
            }
            slopes_[i] = last;
        }
    }
    [[nodiscard]] double at(double x) const {
        if (marks_.empty()) {
            return kNan;
        }
        auto it = std::upper_bound(marks_.begin(), marks_.end(), x,
                                   [](double v, const PlayMark& m) { return v < m.frame; });
        const size_t i = it == marks_.begin() ? 0 : static_cast<size_t>(it - marks_.begin()) - 1;
        return static_cast<double>(marks_[i].ns) +
               (x - static_cast<double>(marks_[i].frame)) * slopes_[i];
    }

private:
    const std::vector<PlayMark>& marks_;
    double nominal_;
    std::vector<double> slopes_;
};

// Frames that belong to a silent run (kSilentRun or longer).
std::vector<bool> silent_frames(const std::vector<float>& frames) {
    const size_t n = frames.size() / 2;
    std::vector<bool> silent(n, false);
    size_t run = 0;
    for (size_t x = 0; x <= n; ++x) {
        const bool zero = x < n && frames[2 * x] == 0 && frames[2 * x + 1] == 0;
        if (zero) {
            ++run;
            continue;
        }
        if (run >= kSilentRun) {
            std::fill(silent.begin() + static_cast<ptrdiff_t>(x - run),
                      silent.begin() + static_cast<ptrdiff_t>(x), true);
        }
        run = 0;
    }
    return silent;
}

// The first frame at which a burst begins: programme not zero after at
// least `quiet` frames of (near) zero. `from` onwards; nullopt if none.
std::optional<size_t> next_onset(const std::vector<float>& frames, size_t from, float floor,
                                 size_t quiet) {
    const size_t n = frames.size() / 2;
    size_t run = 0;
    for (size_t x = from; x < n; ++x) {
        if (std::fabs(frames[2 * x]) <= floor) {
            ++run;
        } else if (run >= quiet) {
            return x;
        } else {
            run = 0;
        }
    }
    return std::nullopt;
}

void put_point(RoomTimeline& timeline, uint64_t index, uint32_t grid, double ns) {
    const uint64_t j = index / grid;
    if (timeline.ns.empty()) {
        timeline.first_index = j * grid;
    }
    const uint64_t first = timeline.first_index / grid;
    if (j < first) {
        return; // played again, earlier than the first point: a step counted elsewhere
    }
    if (j - first >= timeline.ns.size()) {
        timeline.ns.resize(j - first + 1, kNan);
    }
    if (std::isnan(timeline.ns[j - first])) {
        timeline.ns[j - first] = ns;
    }
}

} // namespace

ProbeFrame probe_frame(uint64_t n) {
    const uint64_t burst = n / kProbeBurstEvery;
    const uint64_t k = n % kProbeBurstEvery;
    const float programme = k < kProbeBurstFrames ? noise_s16(burst, k) / 32768.0f : 0.0f;
    const float ramp = (static_cast<int32_t>(n % kRampPeriod) - 32768) / 32768.0f;
    return {programme, ramp};
}

std::vector<int16_t> probe_s16(uint64_t first, uint64_t frames, bool ramp) {
    std::vector<int16_t> out;
    out.reserve(frames * 2);
    for (uint64_t n = first; n < first + frames; ++n) {
        const ProbeFrame f = probe_frame(n);
        out.push_back(static_cast<int16_t>(std::lround(f.programme * 32768.0f)));
        out.push_back(ramp ? static_cast<int16_t>(std::lround(f.ramp * 32768.0f)) : int16_t{0});
    }
    return out;
}

std::optional<std::vector<PlayMark>> parse_play_times(const std::string& text, std::string* error) {
    std::vector<PlayMark> marks;
    std::istringstream lines(text);
    std::string line;
    size_t number = 0;
    while (std::getline(lines, line)) {
        ++number;
        if (line.empty() || line[0] == '#') {
            continue;
        }
        std::istringstream fields(line);
        PlayMark mark{};
        std::string rest;
        if (!(fields >> mark.frame >> mark.ns) || (fields >> rest) ||
            (!marks.empty() && mark.frame < marks.back().frame)) {
            *error = "line " + std::to_string(number) + " is not \"FRAME NS\" after the last";
            return std::nullopt;
        }
        marks.push_back(mark);
    }
    return marks;
}

std::vector<double> read_indices(const RoomRecording& room, RoomTimeline& timeline) {
    const std::vector<float>& f = room.frames;
    const size_t n = f.size() / 2;
    const std::vector<bool> silent = silent_frames(f);

    // The ramp, unwrapped in segments. Within one, each frame's index is
    // the one nearest where the last trusted frame says it should be (one
    // further a frame, or right after it across a silence). A frame that
    // is not there (a resampler's read across the ramp's wrap, the edge of
    // a fade) is left out; a run of kRun frames that agree among
    // themselves but not with it starts a new segment: the index jumped
    // (samples lost or repeated), or the room came back after a while.
    // Each segment's index is first relative to an unknown multiple of
    // the ramp's period, fixed below.
    std::vector<double> index(n, kNan);
    std::vector<size_t> segments; // the first frame of each
    // Whether each segment began where the ramp carried on right after a
    // silence (the stream paused): so it reads, but a stream that played
    // on elsewhere for a whole number of the ramp's periods reads the
    // same (a move into a group and back, 4 s and 96 ms, once did), so
    // its own bursts, where it has them, say which.
    std::vector<bool> bridged;
    const auto ramp_at = [&](size_t x) {
        return static_cast<double>(f[2 * x + 1]) * 32768.0 + 32768.0;
    };
    const auto unwrap_near = [](double u, double near) {
        return u + std::round((near - u) / kRampPeriod) * kRampPeriod;
    };
    constexpr size_t kRun = 8;
    constexpr double kWrapGuard = 8;
    constexpr size_t kMinSegment = 480; // 10 ms
    constexpr double kOnsetFrames = 4;
    bool trusted = false; // a frame has been trusted
    size_t ref_x = 0;     // the last trusted frame ...
    double ref_index = 0; // ... and its index
    bool silence_since = false;
    size_t run_start = 0, run_length = 0; // frames agreeing among themselves, not with ref
    for (size_t x = 0; x < n; ++x) {
        if (silent[x]) {
            silence_since = trusted;
            run_length = 0;
            continue;
        }
        ++timeline.frames_heard;
        const double u = ramp_at(x);
        if (u < kWrapGuard || u > kRampPeriod - kWrapGuard) {
            // A resampler reads between the ramp's top and bottom here: the
            // frames are left out, and nothing is judged by them.
            continue;
        }
        if (trusted) {
            const double expected =
                silence_since ? ref_index + 1 : ref_index + static_cast<double>(x - ref_x);
            const double at = unwrap_near(u, expected);
            if (std::fabs(at - expected) <= 0.5) {
                if (silence_since) {
                    segments.push_back(x);
                    bridged.push_back(true);
                }
                index[x] = at;
                ref_x = x;
                ref_index = at;
                silence_since = false;
                run_length = 0;
                continue;
            }
        }
        // Not where it should be: part of a run of its own?
        if (run_length > 0 && x == run_start + run_length &&
            std::fabs(unwrap_near(u, ramp_at(x - 1) + 1) - (ramp_at(x - 1) + 1)) <= 0.5) {
            ++run_length;
        } else {
            run_start = x;
            run_length = 1;
        }
        if (run_length < kRun) {
            continue;
        }
        segments.push_back(run_start);
        bridged.push_back(false);
        const double at = ramp_at(run_start);
        for (size_t k = run_start; k <= x; ++k) {
            index[k] = unwrap_near(ramp_at(k), at + static_cast<double>(k - run_start));
        }
        trusted = true;
        silence_since = false;
        ref_x = x;
        ref_index = index[x];
        run_length = 0;
    }

    // Each segment's period. A burst begins on a multiple of
    // kProbeBurstEvery, and the two periods together repeat only after
    // 512 s. An onset is a burst's beginning only where the ramp there is
    // one (within kOnsetFrames: a resampler's kernel reaches a few frames
    // before the burst, where it leaks a little of it; other onsets are audio resuming
    // mid-burst after a gap), and the next burst's onset agrees. A segment
    // with no such onset (shorter than a burst's spacing) is placed as
    // long after the last as the time between them.
    const auto period_of = [&](size_t at, double& off) {
        int64_t best_k = 0;
        off = 1e18;
        for (int64_t k = 0; k < kProbeBurstEvery / 64; ++k) { // 375 periods: 512 s
            const double r =
                std::remainder(index[at] + static_cast<double>(k) * kRampPeriod, kProbeBurstEvery);
            if (std::fabs(r) < std::fabs(off)) {
                off = r;
                best_k = k;
            }
        }
        return best_k;
    };
    double last_index = kNan;
    size_t last_x = 0;
    int64_t last_shift = 0;
    bool chain_kept = false; // the segment and the bridged ones after it
    for (size_t i = 0; i < segments.size(); ++i) {
        const size_t from = segments[i];
        const size_t to = i + 1 < segments.size() ? segments[i + 1] : n;
        // A segment shorter than kMinSegment is no place the index went:
        // a receiver's concealment of a lost packet (the packet before,
        // repeated as it fades) or a fade's edge. It is left out, and the
        // audio after it is judged against the audio before. A segment
        // and the bridged ones after it read as one: measured together,
        // kept or left out together.
        if (!bridged[i]) {
            size_t chain_to = i + 1;
            while (chain_to < segments.size() && bridged[chain_to]) {
                ++chain_to;
            }
            size_t end = chain_to < segments.size() ? segments[chain_to] : n;
            while (end > from && std::isnan(index[end - 1])) {
                --end;
            }
            chain_kept = end - from >= kMinSegment;
        }
        if (!chain_kept) {
            std::fill(index.begin() + static_cast<ptrdiff_t>(from),
                      index.begin() + static_cast<ptrdiff_t>(to), kNan);
            continue;
        }
        std::optional<int64_t> shift;
        for (auto onset = next_onset(f, from, 0.0f, 200); onset && *onset < to;
             onset = next_onset(f, *onset + 1, 0.0f, 200)) {
            double off = 0;
            if (std::isnan(index[*onset])) {
                continue;
            }
            const int64_t k = period_of(*onset, off);
            if (std::fabs(off) > kOnsetFrames) {
                continue;
            }
            // The next burst must agree on the period, not merely be a
            // burst's beginning in some period of its own (every true
            // one is): audio that resumed mid-burst, a resampler's edge,
            // can fall within kOnsetFrames of a burst's place in a wrong
            // period (one in about 30), and the burst after it then
            // confirmed it; under TSan it placed a room 3 periods early.
            const auto next = next_onset(f, *onset + kProbeBurstFrames, 0.0f, 200);
            double next_off = 0;
            if (next && *next < to && !std::isnan(index[*next]) &&
                (period_of(*next, next_off) != k || std::fabs(next_off) > kOnsetFrames)) {
                continue;
            }
            shift = k;
            break;
        }
        if (shift && !std::isnan(last_index)) {
            // The onsets place a segment within 512 s; a longer recording
            // takes the 512 s cycle nearest where the last segment left off.
            constexpr int64_t kCycle = kProbeBurstEvery / 64; // periods in 512 s: 375
            const double expected = last_index + static_cast<double>(from - last_x);
            const double placed = index[from] + static_cast<double>(*shift) * kRampPeriod;
            *shift += static_cast<int64_t>(
                          std::llround((expected - placed) / (double(kCycle) * kRampPeriod))) *
                      kCycle;
        }
        if (!shift && bridged[i]) {
            shift = last_shift; // carries on the ramp, as it read
        }
        if (!shift) {
            shift = std::isnan(last_index)
                        ? 0
                        : static_cast<int64_t>(std::round(
                              (last_index + static_cast<double>(from - last_x) - index[from]) /
                              kRampPeriod));
        }
        last_shift = *shift;
        for (size_t x = from; x < to; ++x) {
            index[x] += static_cast<double>(*shift) * kRampPeriod;
        }
        // A segment that does not carry on from the last is a step: samples
        // lost or played twice. Across a silence it carries on either right
        // after the last (the stream paused) or as much later as the
        // silence lasted (it stood in for audio lost, or the room was away).
        if (!std::isnan(last_index)) {
            bool silence = false;
            for (size_t x = last_x + 1; x < from && !silence; ++x) {
                silence = silent[x];
            }
            const double elapsed = last_index + static_cast<double>(from - last_x);
            const bool carried_on = std::fabs(index[from] - elapsed) <= 0.5 ||
                                    (silence && std::fabs(index[from] - (last_index + 1)) <= 0.5);
            if (!carried_on) {
                ++timeline.discontinuities;
                timeline.steps.push_back(static_cast<uint64_t>(std::max(0.0, index[from])));
            }
        }
        for (size_t x = to; x-- > from;) {
            if (!std::isnan(index[x])) {
                last_index = index[x];
                last_x = x;
                break;
            }
        }
    }

    return index;
}

RoomTimeline read_timeline(const RoomRecording& room, uint32_t grid) {
    RoomTimeline timeline;
    timeline.name = room.name;
    const std::vector<double> index = read_indices(room, timeline);
    const size_t n = index.size();
    const TrueClock clock(room.marks, room.rate);
    for (size_t x = 0; x + 1 < n; ++x) {
        if (std::isnan(index[x])) {
            continue;
        }
        if (!timeline.heard) {
            timeline.heard = true;
            timeline.first_heard_index = static_cast<uint64_t>(std::max(0.0, std::round(index[x])));
        }
        const double s0 = index[x];
        const double s1 = index[x + 1];
        if (std::isnan(s1) || s1 - s0 < 0.5 || s1 - s0 > 1.5) {
            continue; // a step, a wrap's odd frame, or the end of what was heard
        }
        // Grid points in (s0, s1], away from the ramp's wrap, where a
        // resampled ramp is not read clearly.
        for (double p = std::floor(s0 / grid + 1) * grid; p <= s1; p += grid) {
            const double within = std::fmod(p, kRampPeriod);
            if (p < 0 || within < 16 || within > kRampPeriod - 16) {
                continue;
            }
            const double at = static_cast<double>(x) + (p - s0) / (s1 - s0);
            put_point(timeline, static_cast<uint64_t>(p), grid, clock.at(at));
        }
    }
    return timeline;
}

RoomTimeline read_bursts(const RoomRecording& room) {
    RoomTimeline timeline;
    timeline.name = room.name;
    const std::vector<float>& f = room.frames;
    const size_t n = f.size() / 2;
    const TrueClock clock(room.marks, room.rate);
    constexpr int kLags = 48;
    constexpr double kMinMatch = 0.3;
    // The first burst heard is one of the first this many (34 minutes).
    constexpr uint64_t kBurstsSearched = 4096;
    std::vector<float> burst(kProbeBurstFrames);
    const auto template_of = [&](uint64_t b) {
        for (uint32_t k = 0; k < kProbeBurstFrames; ++k) {
            burst[k] = noise_s16(b, k) / 32768.0f;
        }
    };
    // Correlation of burst b's template with the programme at `at`.
    const auto correlate = [&](size_t at) {
        double sum = 0;
        for (uint32_t k = 0; k < kProbeBurstFrames && at + k < n; ++k) {
            sum += static_cast<double>(burst[k]) * f[2 * (at + k)];
        }
        return sum;
    };
    // Where a burst begins, from where its sound was first seen: a lossy
    // codec spreads a burst's start (Opus: up to a frame of pre-echo), but
    // not the middle of its energy.
    const auto start_of = [&](size_t onset) {
        double sum = 0, weighted = 0;
        for (size_t x = onset; x < onset + 2 * kProbeBurstFrames && x < n; ++x) {
            const double e = static_cast<double>(f[2 * x]) * f[2 * x];
            sum += e;
            weighted += e * static_cast<double>(x - onset);
        }
        const double centre = sum > 0 ? weighted / sum : kProbeBurstFrames / 2.0;
        return static_cast<size_t>(
            std::max(0.0, static_cast<double>(onset) + centre - kProbeBurstFrames / 2.0));
    };
    std::optional<uint64_t> expected; // the burst the next onset should be
    size_t last_at = 0;
    for (auto seen = next_onset(f, 0, 1e-3f, 2000); seen;
         seen = next_onset(f, *seen + 2 * kProbeBurstFrames, 1e-3f, 2000)) {
        const std::optional<size_t> onset = start_of(*seen);
        // Which burst: about the one after the last found (by the time
        // between them; one either side, should the time mislead), or, until
        // one is found, whichever of all correlates best. A burst heard only
        // in part (the room came in during it) matches none well and is
        // passed over, so it cannot misname the bursts after it.
        uint64_t first = 0, last = kBurstsSearched - 1;
        if (expected) {
            const uint64_t guess =
                *expected +
                static_cast<uint64_t>(std::max(
                    0.0, std::round(static_cast<double>(*onset - last_at) / kProbeBurstEvery) - 1));
            first = guess > 0 ? guess - 1 : 0;
            last = guess + 1;
        }
        uint64_t b = first;
        double best_of_all = 0;
        for (uint64_t candidate = first; candidate <= last; ++candidate) {
            template_of(candidate);
            for (int lag = -kLags / 2; lag <= kLags / 2; ++lag) {
                const auto at = static_cast<int64_t>(*onset) + lag;
                const double c = at < 0 ? 0 : correlate(static_cast<size_t>(at));
                if (c > best_of_all) {
                    best_of_all = c;
                    b = candidate;
                }
            }
        }
        template_of(b);
        // The lag of best correlation, to a fraction by a parabola's peak.
        double best = -1e18;
        int best_lag = 0;
        std::vector<double> c(2 * kLags + 1);
        for (int lag = -kLags; lag <= kLags; ++lag) {
            const auto at = static_cast<int64_t>(*onset) + lag;
            c[lag + kLags] = at < 0 ? 0 : correlate(static_cast<size_t>(at));
            if (c[lag + kLags] > best) {
                best = c[lag + kLags];
                best_lag = lag;
            }
        }
        // A burst the network damaged (a packet of it lost and concealed)
        // no longer looks like its template: its peak would be a guess. It
        // is found only where it still matches (a normalised correlation
        // of kMinMatch or more, which an Opus-coded burst passes and one
        // partly concealed mostly does not) and not at the edge of the
        // search.
        const auto found_at = static_cast<size_t>(std::max<int64_t>(0, int64_t(*onset) + best_lag));
        double template_energy = 0, heard_energy = 0;
        for (uint32_t k = 0; k < kProbeBurstFrames && found_at + k < n; ++k) {
            template_energy += static_cast<double>(burst[k]) * burst[k];
            heard_energy += static_cast<double>(f[2 * (found_at + k)]) * f[2 * (found_at + k)];
        }
        const double match = best / std::sqrt(std::max(template_energy * heard_energy, 1e-30));
        if (match < kMinMatch || best_lag <= -kLags || best_lag >= kLags) {
            continue;
        }
        expected = b + 1;
        last_at = *onset;
        const double l = c[best_lag + kLags - 1], m = c[best_lag + kLags],
                     r = c[best_lag + kLags + 1];
        const double denominator = l - 2 * m + r;
        const double fraction = denominator != 0 ? 0.5 * (l - r) / denominator : 0;
        const double x = static_cast<double>(*onset) + best_lag + fraction;
        if (!timeline.heard) {
            timeline.heard = true;
            timeline.first_heard_index = b * kProbeBurstEvery;
        }
        put_point(timeline, b * kProbeBurstEvery, kProbeBurstEvery, clock.at(x));
    }
    return timeline;
}

PairStats compare(const RoomTimeline& a, const RoomTimeline& b, uint32_t grid, double settle_s,
                  double bound_us) {
    PairStats stats;
    stats.a = a.name;
    stats.b = b.name;
    std::vector<PairPoint>& points = stats.series;
    const uint64_t first = std::max(a.first_index, b.first_index) / grid;
    const uint64_t end =
        std::min(a.first_index / grid + a.ns.size(), b.first_index / grid + b.ns.size());
    double t0 = kNan;
    for (uint64_t j = first; j < end; ++j) {
        const double ta = a.ns[j - a.first_index / grid];
        const double tb = b.ns[j - b.first_index / grid];
        if (std::isnan(ta) || std::isnan(tb)) {
            continue;
        }
        if (std::isnan(t0)) {
            t0 = ta;
        }
        points.push_back({(ta - t0) / 1e9, (ta - tb) / 1e3});
    }
    // Convergence: the first point from which |Δ| stays within the bound
    // for a whole second.
    for (size_t k = 0; k < points.size() && stats.converged_s < 0; ++k) {
        size_t m = k;
        while (m < points.size() && points[m].t_s < points[k].t_s + 1.0 &&
               std::fabs(points[m].delta_us) <= bound_us) {
            ++m;
        }
        if (m < points.size() && points[m].t_s >= points[k].t_s + 1.0) {
            stats.converged_s = points[k].t_s;
        }
    }
    std::vector<double> magnitudes;
    double sum = 0;
    double sum_t = 0, sum_d = 0, sum_tt = 0, sum_td = 0;
    for (const PairPoint& p : points) {
        if (p.t_s >= settle_s) {
            magnitudes.push_back(std::fabs(p.delta_us));
            sum += p.delta_us;
            sum_t += p.t_s;
            sum_d += p.delta_us;
            sum_tt += p.t_s * p.t_s;
            sum_td += p.t_s * p.delta_us;
        }
    }
    stats.points = magnitudes.size();
    if (magnitudes.empty()) {
        return stats;
    }
    const auto count = static_cast<double>(magnitudes.size());
    if (const double spread = count * sum_tt - sum_t * sum_t; spread > 0) {
        // µs of Δ per second of a's time is ppm.
        stats.drift_ppm = (count * sum_td - sum_t * sum_d) / spread;
    }
    std::sort(magnitudes.begin(), magnitudes.end());
    const auto at = [&](double q) {
        const auto i = static_cast<size_t>(std::ceil(q * static_cast<double>(magnitudes.size())));
        return magnitudes[std::min(magnitudes.size() - 1, i == 0 ? 0 : i - 1)];
    };
    stats.p50_us = at(0.5);
    stats.p999_us = at(0.999);
    stats.max_us = magnitudes.back();
    stats.mean_us = sum / static_cast<double>(magnitudes.size());
    return stats;
}

} // namespace audiod::test
