// Creating a stream, and what a player can ask of it without waiting:
// its id, its buffer, its wake-up descriptor and threshold, its timing.
// Moving audio is transfer.cpp's; requests to the server are
// stream_control.cpp's; the state behind it all is StreamCore's.
#include "client_internal.h"
#include "waiting.h"

#include <cmath>
#include <fcntl.h>
#include <new>
#include <unistd.h>

using audiod::MonoClock;
using audiod::client::StreamCore;

namespace {

constexpr uint32_t kDefaultLatencyMs = 100;

} // namespace

extern "C" {

void audiod_stream_params_init(audiod_stream_params* params) {
    if (params == nullptr) {
        return;
    }
    params->format = AUDIOD_FORMAT_S16LE;
    params->rate = 48000;
    params->channels = 2;
    params->latency_ms = kDefaultLatencyMs;
    params->sink = nullptr;
    params->volume = 1.0f;
    params->flags = 0;
}

int audiod_stream_create(audiod_context* ctx, const audiod_stream_params* params,
                         audiod_stream** out) {
    if (ctx == nullptr || params == nullptr || out == nullptr) {
        return AUDIOD_E_INVALID;
    }
    *out = nullptr;
    const unsigned bytes = audiod_format_sample_bytes(params->format);
    if (bytes == 0 || params->channels == 0 || params->channels > 64 || params->rate == 0 ||
        params->latency_ms > AUDIOD_MAX_LATENCY_MS || std::isnan(params->volume) ||
        (params->flags &
         ~(AUDIOD_STREAM_NO_KEEP_CLOCK | AUDIOD_STREAM_MANUAL_START | AUDIOD_STREAM_RECORD)) != 0) {
        return AUDIOD_E_INVALID;
    }
    const uint32_t latency_ms = params->latency_ms == 0 ? kDefaultLatencyMs : params->latency_ms;

    auto core = std::make_shared<StreamCore>();
    core->context = ctx;
    core->format = params->format;
    core->rate = params->rate;
    core->channels = params->channels;
    core->frame_bytes = bytes * params->channels;
    core->buffer_frames = static_cast<uint32_t>((uint64_t{params->rate} * latency_ms + 999) / 1000);
    core->wanted_sink = params->sink != nullptr ? params->sink : "";
    core->keep_clock = (params->flags & AUDIOD_STREAM_NO_KEEP_CLOCK) == 0;
    core->manual_start = (params->flags & AUDIOD_STREAM_MANUAL_START) != 0;
    core->record = (params->flags & AUDIOD_STREAM_RECORD) != 0;
    core->volume = params->volume < 0 ? 1.0f : params->volume;

    audiod::client::ServerStream fresh;
    const int rc = audiod::client::create_on_server(ctx, *core, core->wanted_sink, core->volume,
                                                    AUDIOD_DEFAULT_TIMEOUT_MS, &fresh);
    if (rc != 0) {
        return rc;
    }
    auto* handle = new (std::nothrow) audiod_stream;
    if (handle == nullptr) {
        return AUDIOD_E_NOMEM;
    }
    handle->core = core;
    core->wake_fd = std::move(fresh.wake);
    audiod::client::make_wait_epoll(*core);
    // rebind() puts this copy back in place of the original (dup3)
    fresh.wake.reset(::fcntl(core->wake_fd.get(), F_DUPFD_CLOEXEC, 0));
    audiod::client::rebind(*core, std::move(fresh));
    {
        std::lock_guard lock(ctx->streams_mutex);
        ctx->streams.push_back(handle);
    }
    audiod::client::ensure_supervisor(ctx);
    *out = handle;
    return 0;
}

uint32_t audiod_stream_id(const audiod_stream* stream) {
    if (stream == nullptr) {
        return 0;
    }
    std::lock_guard lock(stream->core->mutex);
    return stream->core->server_id;
}

uint32_t audiod_stream_buffer_frames(const audiod_stream* stream) {
    if (stream == nullptr) {
        return 0;
    }
    std::lock_guard lock(stream->core->mutex);
    return static_cast<uint32_t>(stream->core->capacity_locked());
}

int audiod_stream_fd(const audiod_stream* stream) {
    if (stream == nullptr) {
        return AUDIOD_E_INVALID;
    }
    StreamCore& core = *stream->core;
    core.fd_exported.store(true);
    // Its player waits on the descriptor now, not by the library's clock:
    // the server signals it every cycle its queue runs low.
    std::lock_guard lock(core.mutex);
    if (core.ring.bound()) {
        core.ring.set_flags(0, audiod::kClientFlagSelfTimed);
    }
    return core.wake_fd.get();
}

int audiod_stream_next_wakeup(audiod_stream* stream, uint64_t* at_ns) {
    if (stream == nullptr || at_ns == nullptr) {
        return AUDIOD_E_INVALID;
    }
    StreamCore& core = *stream->core;
    if (core.record) {
        return AUDIOD_E_BADSTATE;
    }
    std::lock_guard lock(core.mutex);
    *at_ns = audiod::client::plan_self_timed_wake_locked(core, MonoClock::now());
    return 0;
}

unsigned audiod_stream_fd_generation(const audiod_stream* stream) {
    return stream == nullptr ? 0 : stream->core->wake_fd_generation.load();
}

void audiod_stream_ack_wakeup(audiod_stream* stream) {
    if (stream != nullptr) {
        stream->core->fd_exported.store(true);
        audiod::client::drain_wakeups(stream->core->wake_fd.get());
    }
}

int audiod_stream_set_wakeup_frames(audiod_stream* stream, uint32_t frames) {
    if (stream == nullptr) {
        return AUDIOD_E_INVALID;
    }
    StreamCore& core = *stream->core;
    std::lock_guard lock(core.mutex);
    if (frames == 0 || frames > core.capacity_locked()) {
        return AUDIOD_E_INVALID;
    }
    core.wake_frames = frames;
    if (core.ring.bound()) {
        core.ring.header()->wake_threshold.store(frames, std::memory_order_relaxed);
    }
    return 0;
}

int audiod_stream_get_timing(const audiod_stream* stream, audiod_stream_timing* timing) {
    if (stream == nullptr || timing == nullptr) {
        return AUDIOD_E_INVALID;
    }
    StreamCore& core = *stream->core;
    std::lock_guard lock(core.mutex);
    if (core.record) {
        // Written by the server, consumed (read) by the player; the delay
        // is what waits to be read.
        const uint64_t ready = core.ready_locked(MonoClock::now());
        *timing = audiod_stream_timing{};
        timing->written = core.client_pos + ready;
        timing->consumed = core.client_pos;
        timing->played = core.client_pos;
        timing->delay_frames = ready;
        timing->sink_start_frame = audiod::kNoFrame;
        timing->underruns = core.xruns_before;
        if (core.ring.bound() && !core.keeping_clock) {
            timing->underruns += core.ring.header()->xruns.load(std::memory_order_relaxed);
            timing->sink_start_frame =
                core.ring.header()->sink_start_frame.load(std::memory_order_acquire);
        }
        timing->rate = core.rate;
        timing->keeping_clock = core.keeping_clock ? 1 : 0;
        return 0;
    }
    const uint64_t queued = core.queued_locked(MonoClock::now());
    const uint64_t consumed = core.client_pos - queued;
    uint32_t latency = 0;
    timing->sink_start_frame = audiod::kNoFrame;
    timing->underruns = core.xruns_before;
    if (core.ring.bound() && !core.keeping_clock) {
        latency = core.ring.header()->sink_latency_frames.load(std::memory_order_relaxed);
        timing->sink_start_frame =
            core.ring.header()->sink_start_frame.load(std::memory_order_acquire);
        timing->underruns += core.ring.header()->xruns.load(std::memory_order_relaxed);
    }
    timing->written = core.client_pos;
    timing->consumed = consumed;
    timing->played = consumed > latency ? consumed - latency : 0;
    timing->delay_frames = queued + latency;
    timing->rate = core.rate;
    timing->keeping_clock = core.keeping_clock ? 1 : 0;
    return 0;
}

} // extern "C"
