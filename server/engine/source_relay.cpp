#include "engine/source_relay.h"

#include "device/stream.h"
#include "os/rt_scope.h"
#include "os/scheduling.h"

#include <algorithm>
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
            read_ += count;
            recorded->client_pos.store(read_, std::memory_order_release);
            deliver(in_.data(), count, end - read_);
        }
    }
}

void SourceRelay::deliver(const float* frames, uint32_t count, uint64_t pending) noexcept {
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

} // namespace audiod
