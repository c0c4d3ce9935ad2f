#include "waiting.h"
#include "self_timing.h"

#include <algorithm>
#include <cerrno>
#include <poll.h>
#include <sys/epoll.h>
#include <unistd.h>

namespace audiod::client {

namespace {

// What woke a stream's wait_epoll.
constexpr uint64_t kWakeFdTag = 0;
constexpr uint64_t kHangupTag = 1;

int poll_ms(std::chrono::nanoseconds wait, const Deadline& deadline) {
    const auto ms = std::chrono::ceil<std::chrono::milliseconds>(wait).count();
    const int left = deadline.poll_timeout_ms();
    return left < 0 ? static_cast<int>(ms) : std::min<int>(left, static_cast<int>(ms));
}

// Calls `wait_once` (a poll or an epoll_wait, given the deadline's timeout
// in ms) again after a signal while time is left. Returns how many
// descriptors are ready: 0 once the deadline has passed (or on an error).
template <class WaitOnce>
int ready_before(const Deadline& deadline, WaitOnce wait_once) {
    for (;;) {
        const int ready = wait_once(deadline.poll_timeout_ms());
        if (ready >= 0 || errno != EINTR || deadline.expired()) {
            return std::max(ready, 0);
        }
    }
}

uint64_t to_ns(MonoClock::time_point t) {
    return static_cast<uint64_t>(
        std::chrono::duration_cast<std::chrono::nanoseconds>(t.time_since_epoch()).count());
}

// One epoll wait that ends by `until` or the deadline, whichever is first
// (nanoseconds: a self-timed writer's margin is a fraction of a
// millisecond). A signal ends it early, as a wake-up: the caller looks
// again. Returns how many descriptors are ready, 0 if none.
int epoll_until(int epoll_fd, epoll_event* events, int max_events, MonoClock::time_point until,
                const Deadline& deadline) {
    const auto wait =
        std::clamp<MonoClock::duration>(std::min(until - MonoClock::now(), deadline.left()),
                                        MonoClock::duration::zero(), std::chrono::hours(1));
    const auto ns = std::chrono::duration_cast<std::chrono::nanoseconds>(wait).count();
    const timespec timeout{static_cast<time_t>(ns / 1'000'000'000),
                           static_cast<long>(ns % 1'000'000'000)};
    int ready = ::epoll_pwait2(epoll_fd, events, max_events, &timeout, nullptr);
    if (ready < 0 && errno == ENOSYS) { // a kernel before 5.11
        const auto ms = std::chrono::ceil<std::chrono::milliseconds>(wait).count();
        ready = ::epoll_wait(epoll_fd, events, max_events, static_cast<int>(ms));
    }
    return std::max(ready, 0);
}

// wait_wakeup for a stream that waits on edges.
int wait_wakeup_edge(StreamCore& core, const Deadline& deadline, MonoClock::time_point self_wake) {
    epoll_event events[2];
    int ready = 0;
    if (self_wake != MonoClock::time_point{}) {
        ready = epoll_until(core.wait_epoll.get(), events, 2, self_wake, deadline);
        if (ready == 0 && !deadline.expired()) {
            return 0; // its own time to look
        }
    } else {
        ready = ready_before(deadline, [&](int timeout_ms) {
            return ::epoll_wait(core.wait_epoll.get(), events, 2, timeout_ms);
        });
    }
    if (ready == 0) {
        return AUDIOD_E_TIMEOUT;
    }
    for (int i = 0; i < ready; ++i) {
        if (events[i].data.u64 == kHangupTag) {
            return AUDIOD_E_DISCONNECTED;
        }
    }
    return 0;
}

// Waits for a server wake-up or the server hanging up, until the deadline.
// Returns 0 (woken), AUDIOD_E_TIMEOUT, or AUDIOD_E_DISCONNECTED.
int wait_wakeup(StreamCore& core, const Deadline& deadline, MonoClock::time_point self_wake) {
    if (waits_on_edges(core)) {
        return wait_wakeup_edge(core, deadline, self_wake);
    }
    // The socket as published for lock-free readers: the supervisor may be
    // replacing the channel meanwhile (client_internal.h, socket_fd).
    pollfd fds[2] = {{core.wake_fd.get(), POLLIN, 0},
                     {core.context->socket_fd.load(), POLLRDHUP, 0}};
    if (ready_before(deadline, [&](int timeout_ms) { return ::poll(fds, 2, timeout_ms); }) == 0) {
        return AUDIOD_E_TIMEOUT;
    }
    if ((fds[1].revents & (POLLRDHUP | POLLHUP | POLLERR | POLLNVAL)) != 0) {
        return AUDIOD_E_DISCONNECTED;
    }
    return 0;
}

// The server went away under a writer: keep the clock, or report it.
void on_lost(StreamCore& core) {
    core.context->connection_lost.store(true);
    std::lock_guard lock(core.mutex);
    if (core.keep_clock) {
        core.keep_clock_locked(MonoClock::now());
    } else if (!core.broken) {
        core.broken = true;
        core.broken_code = AUDIOD_E_DISCONNECTED;
    }
}

} // namespace

uint64_t frames_to_ms(uint64_t frames, uint32_t rate) {
    return rate == 0 ? 0 : (frames * 1000 + rate - 1) / rate;
}

Deadline transfer_deadline(size_t frames, uint32_t rate, int timeout_ms) {
    return Deadline::after_ms(timeout_ms >= 0 ? timeout_ms
                                              : static_cast<int64_t>(frames_to_ms(frames, rate)) +
                                                    AUDIOD_DEFAULT_TIMEOUT_MS);
}

long transfer_result(size_t moved, size_t frames, int timeout_ms) {
    if (moved == 0 && frames > 0) {
        return timeout_ms == 0 ? AUDIOD_E_AGAIN : AUDIOD_E_TIMEOUT;
    }
    return static_cast<long>(moved);
}

void drain_wakeups(int fd) {
    uint64_t count = 0;
    [[maybe_unused]] const ssize_t r = ::read(fd, &count, sizeof count);
}

void watch_for_hangup(audiod_context& ctx) {
    if (!ctx.hangup_epoll) {
        ctx.hangup_epoll.reset(::epoll_create1(EPOLL_CLOEXEC));
    }
    if (ctx.hangup_epoll) {
        // Level-triggered: a socket that hung up stays ready until it is
        // closed, so every later wait sees it too.
        epoll_event ev{};
        ev.events = EPOLLRDHUP;
        ::epoll_ctl(ctx.hangup_epoll.get(), EPOLL_CTL_ADD, ctx.channel.fd(), &ev);
    }
}

void unwatch_hangup(audiod_context& ctx) {
    if (ctx.hangup_epoll) {
        ::epoll_ctl(ctx.hangup_epoll.get(), EPOLL_CTL_DEL, ctx.channel.fd(), nullptr);
    }
}

void make_wait_epoll(StreamCore& core) {
    UniqueFd epoll(::epoll_create1(EPOLL_CLOEXEC));
    epoll_event ev{};
    ev.events = EPOLLIN;
    ev.data.u64 = kHangupTag;
    if (core.context->hangup_epoll && epoll &&
        ::epoll_ctl(epoll.get(), EPOLL_CTL_ADD, core.context->hangup_epoll.get(), &ev) == 0) {
        core.wait_epoll = std::move(epoll);
    }
}

void unwatch_wake_fd(StreamCore& core) {
    core.wake_fd_watched.store(false);
    if (core.wait_epoll && core.wake_fd) {
        ::epoll_ctl(core.wait_epoll.get(), EPOLL_CTL_DEL, core.wake_fd.get(), nullptr);
    }
}

void watch_wake_fd(StreamCore& core) {
    if (!core.wait_epoll) {
        return;
    }
    epoll_event ev{};
    ev.events = EPOLLIN | EPOLLET;
    ev.data.u64 = kWakeFdTag;
    core.wake_fd_watched.store(
        ::epoll_ctl(core.wait_epoll.get(), EPOLL_CTL_ADD, core.wake_fd.get(), &ev) == 0);
}

bool waits_on_edges(const StreamCore& core) {
    return core.wake_fd_watched.load(std::memory_order_relaxed) &&
           !core.fd_exported.load(std::memory_order_relaxed);
}

int wait_for_progress(StreamCore& core, std::chrono::nanoseconds keep_clock_wait,
                      const Deadline& deadline, MonoClock::time_point self_wake) {
    if (keep_clock_wait.count() > 0) {
        pollfd pfd{core.wake_fd.get(), POLLIN, 0};
        ::poll(&pfd, 1, std::max(1, poll_ms(keep_clock_wait, deadline)));
        // Consumed here, as the server's wake-ups are below: left pending,
        // the supervisor's would end every later wait at once, and the
        // caller would spin a frame at a time until the server is back.
        drain_wakeups(core.wake_fd.get());
        return 0;
    }
    const int waited = wait_wakeup(core, deadline, self_wake);
    if (waited == AUDIOD_E_DISCONNECTED) {
        on_lost(core);
        return 0;
    }
    return waited;
}

uint64_t plan_self_timed_wake_locked(StreamCore& core, MonoClock::time_point now) {
    if (!core.ring.bound()) {
        return 0;
    }
    uint64_t at = 0;
    if (!core.record && !core.keeping_clock) {
        const RingHeader* header = core.ring.header();
        SelfTimingInput in;
        in.now_ns = to_ns(now);
        in.cycle_time_ns = header->cycle_time_ns.load(std::memory_order_relaxed);
        in.cycle_period_ns = header->cycle_period_ns.load(std::memory_order_relaxed);
        in.rate = core.rate;
        in.queued = core.queued_locked(now);
        in.capacity = core.capacity_locked();
        in.wake_threshold = core.wake_frames;
        at = self_timed_wake_ns(in);
    }
    core.ring.set_flags(at != 0 ? kClientFlagSelfTimed : 0, at != 0 ? 0 : kClientFlagSelfTimed);
    return at;
}

MonoClock::time_point self_timed_wake_locked(StreamCore& core, MonoClock::time_point now) {
    if (!waits_on_edges(core)) {
        // A poller's flag is its own: audiod_stream_fd() cleared it, and
        // audiod_stream_next_wakeup() sets it for a poller with a timer.
        return MonoClock::time_point{};
    }
    const uint64_t at = plan_self_timed_wake_locked(core, now);
    return at == 0 ? MonoClock::time_point{}
                   : MonoClock::time_point{std::chrono::nanoseconds{static_cast<int64_t>(at)}};
}

} // namespace audiod::client
