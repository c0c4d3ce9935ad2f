// Requests a player makes on a stream: start, pause and resume, flush,
// volume, close. Each gives up soon (kStreamRequestMs), so a stalled server cannot
// freeze a player's pause button; with keep-clock, a request the server did
// not answer applies when the stream is bound to a server again.
#include "client_internal.h"

#include <cmath>
#include <thread>

using audiod::Deadline;
using audiod::MonoClock;
using audiod::client::StreamCore;
namespace proto = audiod::proto;

namespace {

constexpr int kStreamRequestMs = 500;

int stream_command(StreamCore& core, proto::StreamOp op, int timeout_ms) {
    proto::StreamCommand command;
    {
        std::lock_guard lock(core.mutex);
        command.stream_id = core.server_id;
    }
    command.op = static_cast<uint32_t>(op);
    return core.context->call(command, proto::MsgType::ok, nullptr,
                              Deadline::after_ms(timeout_ms < 0 ? kStreamRequestMs : timeout_ms));
}

// With keep-clock, a request the server did not answer is not the player's
// problem: the supervisor re-applies the state when the stream is bound.
int tolerate_lost_server(const StreamCore& core, int rc) {
    const bool lost = rc == AUDIOD_E_TIMEOUT || rc == AUDIOD_E_DISCONNECTED;
    return lost && core.keep_clock ? 0 : rc;
}

int set_paused(audiod_stream* stream, bool paused, int timeout_ms) {
    if (stream == nullptr) {
        return AUDIOD_E_INVALID;
    }
    StreamCore& core = *stream->core;
    bool keeping_clock = false;
    {
        std::lock_guard lock(core.mutex);
        if (core.broken) {
            return core.broken_code;
        }
        core.paused = paused;
        keeping_clock = core.keeping_clock;
        if (keeping_clock) {
            const auto now = MonoClock::now();
            if (paused) {
                core.clock.pause(now, core.client_pos);
            } else {
                core.clock.resume(now);
            }
        }
    }
    if (keeping_clock) {
        return 0; // applied when the stream is bound to a server again
    }
    const int rc =
        stream_command(core, paused ? proto::StreamOp::pause : proto::StreamOp::resume, timeout_ms);
    return tolerate_lost_server(core, rc);
}

} // namespace

extern "C" {

int audiod_stream_start(audiod_stream* stream) {
    if (stream == nullptr) {
        return AUDIOD_E_INVALID;
    }
    StreamCore& core = *stream->core;
    std::lock_guard lock(core.mutex);
    if (core.broken) {
        return core.broken_code;
    }
    core.started = true;
    if (core.ring.bound() && !core.keeping_clock) {
        core.ring.set_flags(audiod::kClientFlagStarted, 0);
    }
    return 0;
}

int audiod_stream_pause(audiod_stream* stream, int timeout_ms) {
    return set_paused(stream, true, timeout_ms);
}

int audiod_stream_resume(audiod_stream* stream, int timeout_ms) {
    return set_paused(stream, false, timeout_ms);
}

int audiod_stream_flush(audiod_stream* stream, int timeout_ms) {
    if (stream == nullptr) {
        return AUDIOD_E_INVALID;
    }
    StreamCore& core = *stream->core;
    proto::FlushStream request;
    {
        std::lock_guard lock(core.mutex);
        if (core.broken) {
            return core.broken_code;
        }
        if (core.record) {
            return AUDIOD_E_BADSTATE;
        }
        core.started = false;
        if (core.keeping_clock) {
            // Nothing is queued but in the clock's count: it has all played.
            core.clock = audiod::client::KeepClock(MonoClock::now(), core.client_pos, core.rate,
                                                   core.paused);
            return 0;
        }
        if (!core.ring.bound()) {
            return 0;
        }
        core.ring.set_flags(0, audiod::kClientFlagStarted | audiod::kClientFlagDraining);
        request.stream_id = core.server_id;
        request.position = core.client_pos - core.ring_base;
    }
    const Deadline deadline = Deadline::after_ms(timeout_ms < 0 ? kStreamRequestMs : timeout_ms);
    const int rc = core.context->call(request, proto::MsgType::ok, nullptr, deadline);
    if (rc != 0) {
        return tolerate_lost_server(core, rc);
    }
    // The server drops the frames on its next cycle; the player's next write
    // should find the room there. A few cycles at most, so a short poll.
    while (true) {
        {
            std::lock_guard lock(core.mutex);
            if (core.keeping_clock || !core.ring.bound() || core.server_id != request.stream_id ||
                core.ring.queued(request.position) == 0) {
                return 0;
            }
        }
        if (deadline.expired()) {
            return tolerate_lost_server(core, AUDIOD_E_TIMEOUT);
        }
        std::this_thread::sleep_for(std::chrono::microseconds(500));
    }
}

int audiod_stream_set_volume(audiod_stream* stream, float volume, int timeout_ms) {
    if (stream == nullptr || !std::isfinite(volume) || volume < 0) {
        return AUDIOD_E_INVALID;
    }
    StreamCore& core = *stream->core;
    proto::SetVolume request;
    {
        std::lock_guard lock(core.mutex);
        core.volume = volume;
        if (core.keeping_clock) {
            return 0;
        }
        request.stream_id = core.server_id;
    }
    request.target = static_cast<uint32_t>(proto::VolumeTarget::stream);
    request.mode = static_cast<uint32_t>(proto::VolumeMode::absolute);
    request.value = volume;
    const int rc =
        core.context->call(request, proto::MsgType::ok, nullptr,
                           Deadline::after_ms(timeout_ms < 0 ? kStreamRequestMs : timeout_ms));
    return tolerate_lost_server(core, rc);
}

int audiod_stream_close(audiod_stream* stream) {
    if (stream == nullptr) {
        return 0;
    }
    StreamCore& core = *stream->core;
    audiod_context* ctx = core.context;
    {
        std::lock_guard lock(ctx->streams_mutex);
        std::erase(ctx->streams, stream);
    }
    bool tell_server = false;
    proto::StreamCommand command;
    command.op = static_cast<uint32_t>(proto::StreamOp::close);
    {
        std::lock_guard lock(core.mutex);
        core.closed = true;
        tell_server = !core.keeping_clock && !core.broken && core.ring.bound();
        command.stream_id = core.server_id;
        core.ring.reset();
    }
    int rc = 0;
    if (tell_server) {
        rc = ctx->call(command, proto::MsgType::ok, nullptr, Deadline::after_ms(kStreamRequestMs));
        rc = tolerate_lost_server(core, rc);
    }
    delete stream; // the core lives on while the supervisor still holds it
    return rc;
}

} // extern "C"
