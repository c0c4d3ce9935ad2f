#include "support/stream_ledger.h"

#include "support/numbered_frames.h"

#include <algorithm>
#include <map>

namespace audiod::test {

void SinkLedger::feed(const int16_t* frames, size_t count, double at_s) {
    for (size_t i = 0; i < count; ++i) {
        ++frames_;
        const int16_t left = frames[2 * i], right = frames[2 * i + 1];
        if (left == 0 && right == 0) {
            ++silent_;
            continue;
        }
        if (const auto frame = read_numbered(left, right)) {
            take(frame->stream, frame->wrapped, at_s);
        } else {
            drop_candidate();
            unreadable(1);
        }
    }
}

void SinkLedger::take(uint32_t stream, uint64_t wrapped, double at_s) {
    const uint64_t held = candidate_ ? candidate_->count : 0;
    if (run_ && stream == run_->stream &&
        wrapped == (run_->last + 1 + pending_ + held) % kNumberedWrap) {
        // The run goes on; what came between was at another gain.
        pending_ += held;
        candidate_.reset();
        run_->unreadable += pending_;
        run_->last += 1 + pending_;
        run_->last_s = at_s;
        pending_ = 0;
        uint64_t seen = latest_[stream].load(std::memory_order_relaxed);
        while (seen < run_->last && !latest_[stream].compare_exchange_weak(seen, run_->last)) {
        }
        return;
    }
    if (candidate_ && stream == candidate_->stream &&
        wrapped == (candidate_->first + candidate_->count) % kNumberedWrap) {
        if (++candidate_->count < kConfirm) {
            return;
        }
        close_run();
        const uint64_t first =
            unwrap_numbered(candidate_->first, latest_[stream].load(std::memory_order_relaxed));
        run_ = Run{stream, sink_, first, first + candidate_->count - 1, candidate_->at_s, at_s, 0};
        candidate_.reset();
        uint64_t seen = latest_[stream].load(std::memory_order_relaxed);
        while (seen < run_->last && !latest_[stream].compare_exchange_weak(seen, run_->last)) {
        }
        return;
    }
    drop_candidate();
    candidate_ = Candidate{stream, wrapped, 1, at_s};
}

void SinkLedger::drop_candidate() {
    if (candidate_) {
        unreadable(candidate_->count);
        candidate_.reset();
    }
}

void SinkLedger::unreadable(uint64_t frames) {
    if (run_) {
        pending_ += frames;
    } else {
        stray_ += frames;
    }
}

void SinkLedger::close_run() {
    if (run_) {
        stray_ += pending_;
        pending_ = 0;
        runs_.push_back(*run_);
        run_.reset();
    }
}

void SinkLedger::finish() {
    drop_candidate();
    close_run();
}

uint64_t Verdict::lost_without_cause() const {
    uint64_t lost = 0;
    for (const Gap& gap : gaps) {
        lost += gap.cause.empty() ? gap.frames : 0;
    }
    return lost;
}

const Gap* Verdict::worst_without_cause() const {
    const Gap* worst = nullptr;
    for (const Gap& gap : gaps) {
        if (gap.cause.empty() && (worst == nullptr || gap.frames > worst->frames)) {
            worst = &gap;
        }
    }
    return worst;
}

namespace {

// The cause whose times overlap the gap's, or failing that come within
// `slack_s` of them: a gap read just after one event's window and within
// another's is the other's.
std::string cause_of(const Gap& gap, const std::string& sink_before, const std::string& sink_after,
                     const std::vector<Cause>& causes, double slack_s) {
    for (const double slack : {0.0, slack_s}) {
        for (const Cause& c : causes) {
            const bool whose = c.stream == gap.stream ||
                               (c.stream == 0 &&
                                (c.sink.empty() || c.sink == sink_before || c.sink == sink_after));
            if (whose && c.from_s - slack <= gap.to_s && c.to_s + slack >= gap.from_s) {
                return c.what;
            }
        }
    }
    return "";
}

} // namespace

Verdict judge(const std::vector<Run>& runs, const std::vector<Cause>& causes, double slack_s) {
    std::map<uint32_t, std::vector<const Run*>> by_stream;
    for (const Run& run : runs) {
        by_stream[run.stream].push_back(&run);
    }
    Verdict verdict;
    for (auto& [stream, list] : by_stream) {
        std::sort(list.begin(), list.end(), [](const Run* a, const Run* b) {
            return a->first != b->first ? a->first < b->first : a->first_s < b->first_s;
        });
        const Run* before = list.front();
        uint64_t end = before->last; // the highest number seen so far
        verdict.frames_checked += before->last - before->first + 1;
        verdict.unreadable += before->unreadable;
        for (size_t i = 1; i < list.size(); ++i) {
            const Run& run = *list[i];
            verdict.unreadable += run.unreadable;
            if (run.first == end + 1) {
                verdict.hand_overs += run.sink != before->sink ? 1 : 0;
            } else if (run.first > end + 1) {
                Gap gap{stream, end, run.first - end - 1, before->last_s, run.first_s, ""};
                gap.cause = cause_of(gap, before->sink, run.sink, causes, slack_s);
                verdict.gaps.push_back(gap);
            } else {
                const uint64_t twice = std::min(end, run.last) - run.first + 1;
                verdict.overlaps.push_back({stream, run.first, twice, run.first_s});
            }
            if (run.last > end) {
                verdict.frames_checked += run.last - std::max(end + 1, run.first) + 1;
                end = run.last;
                before = &run;
            }
        }
    }
    return verdict;
}

} // namespace audiod::test
