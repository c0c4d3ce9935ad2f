#include "engine/source_relay.h"

#include "device/stream.h"
#include "os/rt_scope.h"
#include "os/scheduling.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <poll.h>
#include <pthread.h>
#include <sys/eventfd.h>
#include <system_error>
#include <unistd.h>

namespace audiod {

namespace {

// How long the thread sleeps with nothing recorded: the bound on how long
// stopping it takes.
constexpr int kPollMs = 50;

// Clock drift moves the queue by at most 0.5 % of the time passing (the
// loop's range) and slowly; a queue this far above the uncertainty of its
// reading comes from a sink that stopped taking for a while (its stream
// between sinks, its device gone or late): the relay drops input to get
// back to the target at once rather than bend the pitch for seconds.
constexpr uint32_t kOverfillMs = 10;

// The timed loop: a position error is worked off over kLoopSeconds, and
// a steady one (two clocks' difference) by an integral over four times
// that; the ratio it sets stays within ClockFollower's range.
constexpr double kLoopSeconds = 0.5;
constexpr double kIntegralSeconds = 4 * kLoopSeconds;
constexpr double kMaxTimedCorrection = ClockFollower::kMaxCorrection;
// A re-alignment fades out what it cuts and in what follows over this long.
constexpr uint32_t kFadeMs = 2;

void drain_eventfd(int fd) noexcept {
    uint64_t count = 0;
    [[maybe_unused]] const ssize_t r = ::read(fd, &count, sizeof count);
}

} // namespace

SourceRelay::SourceRelay(std::string name, Stream& record, Stream& playback, uint32_t target_frames,
                         uint32_t source_quantum, uint32_t sink_quantum)
    : name_(std::move(name))
    , record_(record)
    , playback_(playback)
    , channels_(record.channels)
    , target_(target_frames)
    , sink_quantum_(sink_quantum)
    , overfilled_(target_frames + 2 * (source_quantum + sink_quantum) +
                  kOverfillMs * record.rate / 1000)
    , chunk_(std::max<uint32_t>(source_quantum, 64))
    , in_(size_t{chunk_} * channels_)
    // A ratio at most 1.005 below 1 makes a chunk at most that much longer.
    , out_(size_t{chunk_ + chunk_ / 100 + 8} * channels_)
    , resampler_(channels_, 2 * chunk_ + 8)
    , follower_(record.rate, target_frames)
    , stop_fd_(::eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC)) {
    // The queue is read between the source's cycles and the sink's, in an
    // order that scheduling decides: it is known to a cycle of each.
    follower_.set_uncertainty(source_quantum + sink_quantum);
}

std::unique_ptr<SourceRelay> SourceRelay::start(std::string name, Stream& record, Stream& playback,
                                                uint32_t target_frames, uint32_t source_quantum,
                                                uint32_t sink_quantum, int rt_priority) {
    std::unique_ptr<SourceRelay> relay(new SourceRelay(
        std::move(name), record, playback, target_frames, source_quantum, sink_quantum));
    // Woken once a source cycle's worth is recorded.
    record.ring.header()->wake_threshold.store(source_quantum, std::memory_order_relaxed);
    try {
        relay->thread_ = std::thread([p = relay.get(), rt_priority] { p->run(rt_priority); });
    } catch (const std::system_error&) {
        return nullptr;
    }
    return relay;
}

SourceRelay::~SourceRelay() {
    stop_.store(true, std::memory_order_release);
    const uint64_t one = 1;
    [[maybe_unused]] const ssize_t r = ::write(stop_fd_.get(), &one, sizeof one);
    if (thread_.joinable()) {
        thread_.join();
    }
}

void SourceRelay::run(int rt_priority) noexcept {
    char thread_name[16] = {};
    std::snprintf(thread_name, sizeof thread_name, "play:%s", name_.c_str());
    pthread_setname_np(pthread_self(), thread_name);
    (void)raise_current_thread_priority(rt_priority);

    RingHeader* recorded = record_.ring.header();
    const RingView ring = record_.ring.view();
    pollfd fds[2] = {{record_.wake_fd.get(), POLLIN, 0}, {stop_fd_.get(), POLLIN, 0}};
    while (!stop_.load(std::memory_order_acquire)) {
        ::poll(fds, 2, kPollMs);
        RtScope in_cycle; // the RT-safety test checks this thread too
        drain_eventfd(record_.wake_fd.get());
        // The server's own stream: its position needs no checking.
        const uint64_t end = recorded->server_pos.load(std::memory_order_acquire);
        while (read_ < end && !stop_.load(std::memory_order_relaxed)) {
            const auto count = static_cast<uint32_t>(std::min<uint64_t>(end - read_, chunk_));
            ring.copy_out(read_, reinterpret_cast<uint8_t*>(in_.data()), count);
            const uint64_t first = read_;
            read_ += count;
            recorded->client_pos.store(read_, std::memory_order_release);
            const TimeAnchor source = record_.heard.read();
            if (source.ns != 0) {
                deliver_timed(in_.data(), count, first, source);
            } else {
                if (timed_now_.load(std::memory_order_relaxed)) {
                    // Timing stopped (a new sender, not yet heard from):
                    // the queue loop takes over from where things stand.
                    timed_now_.store(false, std::memory_order_relaxed);
                    follower_.reset(false);
                }
                deliver(in_.data(), count, first, end - read_);
            }
        }
    }
}

void SourceRelay::deliver(const float* frames, uint32_t count, uint64_t first,
                          uint64_t pending) noexcept {
    RingHeader* playing = playback_.ring.header();
    const uint64_t capacity = playback_.ring.capacity();
    const uint64_t consumed = playing->server_pos.load(std::memory_order_acquire);
    uint64_t queued = written_ - consumed;

    if (started_ && consumed == 0 && queued >= uint64_t{target_} + sink_quantum_) {
        // The sink has yet to take its first frames: the stream reaches its
        // thread some cycles after this one starts (many, on a busy
        // machine). The queue waits at its starting level; what comes
        // meanwhile no one could have heard, and dropping it is no resync.
        return;
    }
    if (started_ && queued == 0) {
        // What is recorded and about to follow counts towards the target.
        queued = refill(count + pending);
    }
    // A sink that took nothing for longer than its cycle (the stream was
    // between sinks, or its sink was away) comes back to a fuller queue:
    // the loop starts over from there, rather than bending the pitch to
    // drain what the pause added.
    if (consumed == last_consumed_) {
        unconsumed_ += count;
    } else {
        if (started_ && unconsumed_ > sink_quantum_) {
            follower_.reset(false);
            restarts_.fetch_add(1, std::memory_order_relaxed);
        }
        unconsumed_ = 0;
        last_consumed_ = consumed;
    }
    if (started_ && queued > overfilled_) {
        skipping_ = true;
    }
    if (skipping_) {
        if (queued > target_) {
            return; // dropped: the queue drains back to the target
        }
        skipping_ = false;
        follower_.reset(false);
        resyncs_.fetch_add(1, std::memory_order_relaxed);
    }

    const uint32_t taken = resampler_.push(frames, count);
    input_end_ = first + taken; // so that timing, when it comes, starts from here
    // The latency is the queue plus what is recorded and not yet carried
    // over: a thread woken late finds the queue low and as much waiting,
    // and that is no news about the clocks.
    const double latency = static_cast<double>(queued + pending);
    const double ratio = started_ ? follower_.update(latency, taken) : 1.0;
    ratio_.store(ratio, std::memory_order_relaxed);
    queued_.store(started_ ? follower_.latency() : latency, std::memory_order_relaxed);
    const uint64_t room = capacity - std::min(queued, capacity);
    const uint32_t max_out = static_cast<uint32_t>(out_.size() / channels_);
    const uint32_t produced = resampler_.pull(
        out_.data(), static_cast<uint32_t>(std::min<uint64_t>(room, max_out)), ratio);
    playback_.ring.view().copy_in(written_, reinterpret_cast<const uint8_t*>(out_.data()),
                                  produced);
    written_ += produced;
    playing->client_pos.store(written_, std::memory_order_release);
    // The sink takes a cycle's worth at once: a queue of target + that
    // holds the target between its cycles.
    if (!started_ && queued + produced >= uint64_t{target_} + sink_quantum_) {
        started_ = true;
        playing->client_flags.fetch_or(kClientFlagStarted, std::memory_order_release);
    }
}

uint64_t SourceRelay::refill(uint64_t coming) noexcept {
    // The sink took everything: this thread was held up, or the source
    // stopped delivering. Start again a target ahead, as at the start,
    // counting what is recorded and on its way.
    std::fill(out_.begin(), out_.end(), 0.0f);
    const uint64_t silence = target_ - std::min<uint64_t>(target_, coming);
    uint64_t missing = silence;
    const uint32_t max_out = static_cast<uint32_t>(out_.size() / channels_);
    while (missing > 0) {
        const auto n = static_cast<uint32_t>(std::min<uint64_t>(missing, max_out));
        playback_.ring.view().copy_in(written_, reinterpret_cast<const uint8_t*>(out_.data()), n);
        written_ += n;
        missing -= n;
    }
    playback_.ring.header()->client_pos.store(written_, std::memory_order_release);
    resampler_.clear();
    follower_.reset(false);
    refills_.fetch_add(1, std::memory_order_relaxed);
    return silence;
}

void SourceRelay::deliver_timed(const float* frames, uint32_t count, uint64_t first,
                                const TimeAnchor& source) noexcept {
    RingHeader* playing = playback_.ring.header();
    const uint64_t consumed = playing->server_pos.load(std::memory_order_acquire);
    if (!timed_now_.load(std::memory_order_relaxed)) {
        // Timing has come: the frames already queued stay (the first
        // error measured re-aligns them).
        timed_now_.store(true, std::memory_order_relaxed);
        locked_ = false;
        integral_ = 0;
    }
    if (started_ && written_ == consumed) {
        (void)refill(count); // the sink ran dry: start over, then re-align
        locked_ = false;
    }
    // Input a re-alignment skips.
    const uint32_t skipped = static_cast<uint32_t>(std::min<uint64_t>(skip_input_, count));
    skip_input_ -= skipped;
    frames += size_t{skipped} * channels_;
    count -= skipped;
    first += skipped;
    if (count == 0) {
        return;
    }
    const uint64_t capacity = playback_.ring.capacity();
    if (capacity - std::min(written_ - consumed, capacity) < uint64_t{count} * 2) {
        // The sink is not taking (gone, or yet to start): nothing written
        // now would be heard when due. Start afresh when it takes again.
        resampler_.clear();
        locked_ = false;
        return;
    }
    // After a skip, or a clear, the resampler holds nothing: the frames
    // pushed now are the ones it gives next, wherever they are.
    const uint32_t taken = resampler_.push(frames, count);
    input_end_ = first + taken;

    double ratio = 1;
    double error_ns = 0;
    if (started_ && timing_error(source, error_ns)) {
        sync_error_us_.store(error_ns / 1e3, std::memory_order_relaxed);
        const bool stepped = locked_ && std::fabs(error_ns - last_error_ns_) > kStepMs * 1e6;
        const bool realigning = !locked_ || stepped || std::fabs(error_ns) > kRealignMs * 1e6;
        if (realigning) {
            if (locked_) {
                realigns_.fetch_add(1, std::memory_order_relaxed);
            }
            realign(error_ns);
            locked_ = true;
            paced_ = false;
            integral_ = 0;
        }
        if (!paced_) {
            // Start the loop at the ratio the two paces ask for (a sink
            // 100 ppm slow takes 100 ppm fewer frames a second), as soon as
            // both are known, so that it has nothing to learn.
            const TimeAnchor played = playback_.heard.read();
            if (played.ns_per_frame != 0 && source.ns_per_frame != 0) {
                integral_ = std::clamp(played.ns_per_frame / source.ns_per_frame - 1,
                                       -kMaxTimedCorrection, kMaxTimedCorrection);
                paced_ = true;
            }
        }
        if (realigning) {
            ratio = 1 + integral_; // the error measured is gone
            last_error_ns_ = 0;
        } else {
            last_error_ns_ = error_ns;
            // Late: take the input a little faster. The error is read
            // afresh each time, so the loop needs no model of the clocks.
            const double error_s = error_ns / 1e9;
            const double dt = static_cast<double>(count) / record_.rate;
            integral_ = std::clamp(integral_ + error_s * dt / (kLoopSeconds * kIntegralSeconds),
                                   -kMaxTimedCorrection, kMaxTimedCorrection);
            ratio = 1 + std::clamp(error_s / kLoopSeconds + integral_, -kMaxTimedCorrection,
                                   kMaxTimedCorrection);
        }
    }
    ratio_.store(ratio, std::memory_order_relaxed);
    const uint64_t queued = written_ - playing->server_pos.load(std::memory_order_acquire);
    queued_.store(static_cast<double>(queued), std::memory_order_relaxed);
    const uint64_t room = playback_.ring.capacity() - std::min(queued, playback_.ring.capacity());
    const auto max_out = static_cast<uint32_t>(out_.size() / channels_);
    const uint32_t produced = resampler_.pull(
        out_.data(), static_cast<uint32_t>(std::min<uint64_t>(room, max_out)), ratio);
    write_out(produced);
    if (!started_ && queued + produced >= uint64_t{target_} + sink_quantum_) {
        started_ = true;
        playing->client_flags.fetch_or(kClientFlagStarted, std::memory_order_release);
    }
}

bool SourceRelay::timing_error(const TimeAnchor& source, double& error_ns) const noexcept {
    const TimeAnchor played = playback_.heard.read();
    if (played.ns == 0 || written_ < played.position) {
        return false;
    }
    const double nominal = 1e9 / record_.rate;
    // The next frame written, and the input frame the resampler gives next.
    const double heard = played.heard_at(written_, 1e9 / playback_.rate);
    const double next_input = static_cast<double>(input_end_) - resampler_.buffered();
    const double due = static_cast<double>(source.ns) +
                       (next_input - static_cast<double>(source.position)) *
                           (source.ns_per_frame != 0 ? source.ns_per_frame : nominal);
    error_ns = heard - due;
    return true;
}

void SourceRelay::realign(double error_ns) noexcept {
    // Fade out the end of what is queued, where the sink has not reached
    // it, so that the cut does not click.
    const uint64_t consumed = playback_.ring.header()->server_pos.load(std::memory_order_acquire);
    const uint32_t fade = record_.rate * kFadeMs / 1000;
    const auto view = playback_.ring.view();
    if (written_ - consumed >= uint64_t{fade} + 2 * sink_quantum_ &&
        fade <= out_.size() / channels_) {
        view.copy_out(written_ - fade, reinterpret_cast<uint8_t*>(out_.data()), fade);
        for (uint32_t f = 0; f < fade; ++f) {
            const float gain = static_cast<float>(fade - f) / static_cast<float>(fade + 1);
            for (uint32_t c = 0; c < channels_; ++c) {
                out_[size_t{f} * channels_ + c] *= gain;
            }
        }
        view.copy_in(written_ - fade, reinterpret_cast<const uint8_t*>(out_.data()), fade);
    }
    if (error_ns > 0) {
        // Late: skip what is due already, from the resampler first.
        const double frames = error_ns * record_.rate / 1e9;
        const double moved = resampler_.skip(frames);
        skip_input_ += static_cast<uint64_t>(std::llround(frames - moved));
    } else {
        // Early: queue silence until the next frame is due.
        auto silence = static_cast<uint64_t>(std::llround(-error_ns * playback_.rate / 1e9));
        const uint64_t queued = written_ - consumed;
        silence = std::min(silence,
                           playback_.ring.capacity() - std::min(queued, playback_.ring.capacity()));
        std::fill(out_.begin(), out_.end(), 0.0f);
        const auto max_out = static_cast<uint32_t>(out_.size() / channels_);
        while (silence > 0) {
            const auto n = static_cast<uint32_t>(std::min<uint64_t>(silence, max_out));
            view.copy_in(written_, reinterpret_cast<const uint8_t*>(out_.data()), n);
            written_ += n;
            silence -= n;
        }
        playback_.ring.header()->client_pos.store(written_, std::memory_order_release);
    }
    fade_in_left_ = fade;
}

void SourceRelay::write_out(uint32_t produced) noexcept {
    const uint32_t fade = record_.rate * kFadeMs / 1000;
    for (uint32_t f = 0; f < produced && fade_in_left_ > 0; ++f, --fade_in_left_) {
        const float gain =
            static_cast<float>(fade - fade_in_left_ + 1) / static_cast<float>(fade + 1);
        for (uint32_t c = 0; c < channels_; ++c) {
            out_[size_t{f} * channels_ + c] *= gain;
        }
    }
    playback_.ring.view().copy_in(written_, reinterpret_cast<const uint8_t*>(out_.data()),
                                  produced);
    written_ += produced;
    playback_.ring.header()->client_pos.store(written_, std::memory_order_release);
}

} // namespace audiod
