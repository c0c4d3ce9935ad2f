// The supervisor: one thread per context, started with its first stream,
// that keeps the promise "a player never freezes because the server did".
//
// Every 250 ms (50 ms while a stream keeps its clock) it looks at the
// connection and at each stream:
//  * The socket hung up: the server is gone. Every stream starts keeping
//    its own clock (or, without keep-clock, fails with DISCONNECTED) —
//    unless the server said, before it closed, that it ended this client
//    on purpose (audioctl kill-client): then every stream fails with
//    KILLED, and nothing reconnects.
//  * A stream's heartbeat — a counter the server's RT thread bumps every
//    cycle in the shared ring header — stood still for 500 ms: the server
//    (or that stream's sink) stalled. The stream keeps its own clock from
//    the moment the heartbeat stopped (or fails with STALLED).
// While any stream keeps its clock, every 250 ms it tries to get a server
// back: it re-dials a lost one (connect + Hello), or probes a stalled one
// (GetInfo). Once one answers, each stream keeping its clock is created anew there,
// on the sink it asked for (or the default), and bound in place of its old
// ring; the player's next write lands in the new ring.
// Its requests have short deadlines so that it keeps its pace.
#include "client_internal.h"
#include "protocol/socket_path.h"
#include "waiting.h"

#include <poll.h>
#include <sys/epoll.h>

using audiod::Deadline;
using audiod::MonoClock;
namespace proto = audiod::proto;

namespace audiod::client {

namespace {

bool hung_up(int fd) {
    pollfd pfd{fd, POLLRDHUP, 0};
    return ::poll(&pfd, 1, 0) > 0 && (pfd.revents & (POLLRDHUP | POLLHUP | POLLERR | POLLNVAL));
}

// Checks the heartbeat of a bound stream; makes it keep its clock (or breaks it) when the
// server stood still too long. Call with core.mutex held.
void watch_heartbeat(StreamCore& core, MonoClock::time_point now) {
    const uint64_t heartbeat = core.ring.header()->heartbeat.load(std::memory_order_relaxed);
    if (heartbeat != core.seen_heartbeat || core.heartbeat_changed == MonoClock::time_point{}) {
        core.seen_heartbeat = heartbeat;
        core.heartbeat_changed = now;
        return;
    }
    if (now - core.heartbeat_changed < kStallTimeout) {
        return;
    }
    if (core.keep_clock) {
        // Keep time from when the server stopped, not from when we noticed.
        core.keep_clock_locked(core.heartbeat_changed);
    } else {
        core.broken = true;
        core.broken_code = AUDIOD_E_STALLED;
        core.wake();
    }
}

// Whether the server ended this client on purpose: its last word, read from
// what is left on the closed socket, was a KILLED error.
bool ended_by_server(audiod_context* ctx) {
    std::lock_guard lock(ctx->request_mutex);
    [[maybe_unused]] const int rc = ctx->channel.pump();
    const auto& farewell = ctx->channel.farewell();
    return farewell && farewell->code == AUDIOD_E_KILLED;
}

// Sends a stream command without waiting for the answer (it will be skipped
// like any late reply): the supervisor must keep its pace.
void post_command(audiod_context* ctx, uint32_t stream_id, proto::StreamOp op) {
    proto::StreamCommand command;
    command.stream_id = stream_id;
    command.op = static_cast<uint32_t>(op);
    std::lock_guard lock(ctx->request_mutex);
    [[maybe_unused]] const int rc = ctx->channel.post(command);
}

// Re-dials the server; on success the context uses the new connection.
bool reconnect(audiod_context* ctx) {
    proto::RequestChannel fresh;
    // Where the context was connected first: a player of the user's server
    // does not wander to the system one, or back.
    if (fresh.connect(ctx->socket_path) != 0) {
        return false;
    }
    proto::Hello hello;
    hello.app_name = ctx->app_name;
    proto::HelloReply reply;
    if (fresh.call_for(hello, &reply, Deadline::after_ms(kSupervisorRequestMs)) != 0 ||
        reply.version != proto::kProtocolVersion) {
        return false;
    }
    std::lock_guard lock(ctx->request_mutex);
    unwatch_hangup(*ctx);
    ctx->channel = std::move(fresh);
    ctx->socket_fd.store(ctx->channel.fd());
    ctx->client_id = reply.client_id;
    ctx->server_rate = reply.rate;
    ctx->server_channels = reply.channels;
    ctx->connection_lost.store(false);
    watch_for_hangup(*ctx);
    if (ctx->events_epoll) {
        // The old socket left the epoll set when it was closed.
        epoll_event ev{};
        ev.events = EPOLLIN;
        ::epoll_ctl(ctx->events_epoll.get(), EPOLL_CTL_ADD, ctx->channel.fd(), &ev);
    }
    if (ctx->subscribed) {
        [[maybe_unused]] const int rc =
            ctx->call_locked(proto::Subscribe{}, proto::MsgType::ok, nullptr,
                             Deadline::after_ms(kSupervisorRequestMs));
    }
    return true;
}

// Creates `core` anew on the server that now answers and binds it.
// Returns false if the server did not manage (try again later).
bool recreate(audiod_context* ctx, const std::shared_ptr<StreamCore>& core, bool same_server) {
    uint32_t old_id = 0;
    float volume = 1.0f;
    bool paused = false;
    {
        std::lock_guard lock(core->mutex);
        if (core->closed || !core->keeping_clock) {
            return true;
        }
        old_id = core->server_id;
        volume = core->volume;
        paused = core->paused;
    }
    if (same_server) {
        // The stalled server still has the old stream; it goes.
        post_command(ctx, old_id, proto::StreamOp::close);
    }
    ServerStream fresh;
    int rc = create_on_server(ctx, *core, core->wanted_sink, volume, kSupervisorRequestMs, &fresh);
    if (rc == AUDIOD_E_NOENTITY && !core->wanted_sink.empty()) {
        rc = create_on_server(ctx, *core, "", volume, kSupervisorRequestMs, &fresh);
    }
    if (rc != 0) {
        return false;
    }
    const uint32_t new_id = fresh.id;
    if (!rebind(*core, std::move(fresh))) {
        post_command(ctx, new_id, proto::StreamOp::close); // the player closed it meanwhile
        return true;
    }
    if (paused) {
        post_command(ctx, new_id, proto::StreamOp::pause);
    }
    return true;
}

void supervise(audiod_context* ctx) {
    MonoClock::time_point next_attempt{};
    bool any_keeping_clock = false;
    bool ended = false;
    for (;;) {
        {
            std::unique_lock lock(ctx->supervisor_mutex);
            if (ctx->supervisor_wakeup.wait_for(lock,
                                                any_keeping_clock ? kSupervisePeriod : kWatchPeriod,
                                                [&] { return ctx->supervisor_stopping; })) {
                return;
            }
        }
        std::vector<std::shared_ptr<StreamCore>> streams;
        {
            std::lock_guard lock(ctx->streams_mutex);
            for (const audiod_stream* handle : ctx->streams) {
                streams.push_back(handle->core);
            }
        }
        if (streams.empty()) {
            continue;
        }
        const auto now = MonoClock::now();
        if (!ctx->connection_lost.load() && hung_up(ctx->socket_fd.load())) {
            ctx->connection_lost.store(true);
        }
        const bool lost = ctx->connection_lost.load();
        ended = ended || (lost && ended_by_server(ctx));
        any_keeping_clock = false;
        for (const auto& core : streams) {
            std::lock_guard lock(core->mutex);
            if (core->closed || core->broken) {
                continue;
            }
            if (ended) {
                core->broken = true;
                core->broken_code = AUDIOD_E_KILLED;
                core->wake();
                continue;
            }
            // The time now that the stream is ours: a player's thread may
            // have used a later one while we waited for its lock.
            const auto at = MonoClock::now();
            if (lost && !core->keeping_clock) {
                if (core->keep_clock) {
                    core->keep_clock_locked(at);
                } else {
                    core->broken = true;
                    core->broken_code = AUDIOD_E_DISCONNECTED;
                    core->wake();
                }
            } else if (!core->keeping_clock) {
                watch_heartbeat(*core, at);
            }
            if (core->keeping_clock) {
                any_keeping_clock = true;
                // Poll-based players wait on the wake fd: tell them there
                // is room, as the server would.
                if (core->wake_due_locked(at)) {
                    core->wake();
                }
            }
        }
        if (!any_keeping_clock || now < next_attempt) {
            continue;
        }
        next_attempt = now + kRetryPeriod;
        if (lost) {
            if (!reconnect(ctx)) {
                continue;
            }
        } else {
            proto::ServerInfo info;
            std::unique_lock lock(ctx->request_mutex);
            if (ctx->channel.call_for(proto::GetInfo{}, &info,
                                      Deadline::after_ms(kSupervisorRequestMs)) != 0) {
                continue; // still stalled (or just lost: next round re-dials)
            }
        }
        for (const auto& core : streams) {
            if (!recreate(ctx, core, !lost)) {
                break;
            }
        }
    }
}

} // namespace

void ensure_supervisor(audiod_context* ctx) {
    std::lock_guard lock(ctx->supervisor_mutex);
    if (!ctx->supervisor.joinable() && !ctx->supervisor_stopping) {
        ctx->supervisor = std::thread(supervise, ctx);
    }
}

} // namespace audiod::client
