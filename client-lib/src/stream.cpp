// Playback streams: the client side of the shared-memory ring, and the
// keep-clock that takes over when no server consumes it.
//
// Writing copies frames into the ring and publishes client_pos with release
// ordering; the server's acquire load of client_pos then sees the frames.
// Waiting for room uses the stream's eventfd, which the server signals only
// when free space crosses our wake-up threshold or the ring runs empty. When
// the server is gone or stalled (supervisor.cpp decides), the stream is
// "keeping the clock": writes are accepted and consumed by a virtual clock
// at the nominal rate, so nothing the player calls freezes, until the
// supervisor binds the stream to a ring of a live server again.
#include "client_internal.h"
#include "protocol/sample_format.h"

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cmath>
#include <cstring>
#include <new>
#include <poll.h>
#include <time.h>
#include <unistd.h>

using audiod::Deadline;
using audiod::MonoClock;
using audiod::client::StreamCore;
namespace proto = audiod::proto;

namespace {

constexpr uint32_t kDefaultLatencyMs = 100;
// Requests a player makes on a stream (pause, volume) give up this soon, so
// a stalled server cannot freeze a player's pause button; with keep-clock
// the change is applied when the stream is bound again.
constexpr int kStreamRequestMs = 500;

uint64_t frames_to_ms(uint64_t frames, uint32_t rate) {
    return rate == 0 ? 0 : (frames * 1000 + rate - 1) / rate;
}

// A read or write of `frames` with timeout_ms (negative: the audio's own
// duration plus the default timeout) ends by this deadline.
Deadline transfer_deadline(size_t frames, uint32_t rate, int timeout_ms) {
    return Deadline::after_ms(timeout_ms >= 0 ? timeout_ms
                                              : static_cast<int64_t>(frames_to_ms(frames, rate)) +
                                                    AUDIOD_DEFAULT_TIMEOUT_MS);
}

// What a read or write returns: the frames moved, or why none were.
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

int poll_ms(std::chrono::nanoseconds wait, const Deadline& deadline) {
    const auto ms = std::chrono::ceil<std::chrono::milliseconds>(wait).count();
    const int left = deadline.poll_timeout_ms();
    return left < 0 ? static_cast<int>(ms) : std::min<int>(left, static_cast<int>(ms));
}

// Waits for a server wake-up or the server hanging up, until the deadline.
// Returns 0 (woken), AUDIOD_E_TIMEOUT, or AUDIOD_E_DISCONNECTED.
int wait_wakeup(StreamCore& core, const Deadline& deadline) {
    pollfd fds[2] = {{core.wake_fd.get(), POLLIN, 0}, {core.context->channel.fd(), POLLRDHUP, 0}};
    for (;;) {
        const int ready = ::poll(fds, 2, deadline.poll_timeout_ms());
        if (ready < 0 && errno == EINTR) {
            if (deadline.expired()) {
                return AUDIOD_E_TIMEOUT;
            }
            continue;
        }
        if (ready <= 0) {
            return AUDIOD_E_TIMEOUT;
        }
        if ((fds[1].revents & (POLLRDHUP | POLLHUP | POLLERR | POLLNVAL)) != 0) {
            return AUDIOD_E_DISCONNECTED;
        }
        return 0;
    }
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

// Waits for whatever lets a write or drain progress: the kept clock's pace
// when no server plays the stream (a supervisor wake-up ends it early), else
// the server's wake-up. Returns 0 to go on, or AUDIOD_E_TIMEOUT.
int wait_for_progress(StreamCore& core, std::chrono::nanoseconds keep_clock_wait,
                      const Deadline& deadline) {
    if (keep_clock_wait.count() > 0) {
        pollfd pfd{core.wake_fd.get(), POLLIN, 0};
        ::poll(&pfd, 1, std::max(1, poll_ms(keep_clock_wait, deadline)));
        // Consumed here, as the server's wake-ups are below: left pending,
        // the supervisor's would end every later wait at once, and the
        // caller would spin a frame at a time until the server is back.
        drain_wakeups(core.wake_fd.get());
        return 0;
    }
    const int waited = wait_wakeup(core, deadline);
    if (waited == AUDIOD_E_DISCONNECTED) {
        on_lost(core);
        return 0;
    }
    return waited;
}

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

} // namespace

namespace audiod::client {

uint64_t StreamCore::queued_locked(MonoClock::time_point now) {
    if (keeping_clock) {
        return client_pos - clock.consumed(now, client_pos);
    }
    return ring.bound() ? ring.queued(client_pos - ring_base) : 0;
}

uint64_t StreamCore::ready_locked(MonoClock::time_point now) {
    if (keeping_clock) {
        // The clock "captures" silence from where the server stopped.
        const uint64_t captured = clock.consumed(now, ~uint64_t{0});
        if (captured <= client_pos) {
            // A `now` taken before the reader's last look (the supervisor's,
            // say) puts the clock behind the reader: nothing new is ready.
            // (Unsigned arithmetic would otherwise call it an overrun and
            // move the reader back a whole buffer.)
            return 0;
        }
        if (captured - client_pos > capacity_locked()) {
            client_pos = captured - capacity_locked(); // overrun: the oldest is gone
        }
        return captured - client_pos;
    }
    return ring.bound() ? ring.ready(client_pos - ring_base) : 0;
}

bool StreamCore::wake_due_locked(MonoClock::time_point now) {
    return record ? ready_locked(now) >= wake_frames
                  : capacity_locked() - queued_locked(now) >= wake_frames;
}

void StreamCore::keep_clock_locked(MonoClock::time_point since) {
    if (keeping_clock || closed) {
        return;
    }
    // Playback: what the server had consumed; record: what it had captured,
    // which stays readable in the ring.
    const uint64_t consumed =
        record ? client_pos + (ring.bound() ? ring.ready(client_pos - ring_base) : 0)
               : client_pos - (ring.bound() ? ring.queued(client_pos - ring_base) : 0);
    recorded_in_ring = record ? consumed : 0;
    clock = KeepClock(since, consumed, rate, paused);
    keeping_clock = true;
    wake();
}

void StreamCore::wake() const noexcept {
    const uint64_t one = 1;
    [[maybe_unused]] const ssize_t w = ::write(wake_fd.get(), &one, sizeof one);
}

int create_on_server(audiod_context* ctx, const StreamCore& core, const std::string& sink,
                     float volume, int timeout_ms, ServerStream* out) {
    proto::CreateStream request;
    request.format = static_cast<uint32_t>(core.format);
    request.rate = core.rate;
    request.channels = core.channels;
    request.buffer_frames = core.buffer_frames;
    request.sink = sink;
    request.volume = volume;
    request.direction = static_cast<uint32_t>(core.record ? proto::StreamDirection::record
                                                          : proto::StreamDirection::playback);
    proto::Packet reply;
    const int rc =
        ctx->call(request, proto::MsgType::stream_created, &reply, Deadline::after_ms(timeout_ms));
    if (rc != 0) {
        return rc;
    }
    proto::StreamCreated created;
    if (!proto::decode(proto::parse_envelope(reply.bytes)->body, created) ||
        reply.fds.size() != 2 || created.capacity_frames == 0) {
        return AUDIOD_E_PROTOCOL;
    }
    if (const int mapped = out->ring.map(created, reply.fds[0].get(), core.frame_bytes);
        mapped != 0) {
        return mapped;
    }
    out->id = created.stream_id;
    out->wake = std::move(reply.fds[1]);
    return 0;
}

bool rebind(StreamCore& core, ServerStream&& fresh) {
    std::lock_guard lock(core.mutex);
    if (core.closed) {
        return false;
    }
    if (core.ring.bound()) {
        core.xruns_before += core.ring.header()->xruns.load(std::memory_order_relaxed);
    }
    core.ring = std::move(fresh.ring);
    core.server_id = fresh.id;
    // The new ring starts empty at position 0; what the keep-clock had
    // queued counts as played.
    core.ring_base = core.client_pos;
    core.keeping_clock = false;
    core.start_threshold = std::max<uint64_t>(1, core.ring.capacity() / 2);
    if (core.wake_frames == 0 || core.wake_frames > core.ring.capacity()) {
        // A reader is woken sooner than a writer: a late reader loses audio.
        core.wake_frames = static_cast<uint32_t>(
            core.record ? std::max<uint64_t>(1, core.ring.capacity() / 4) : core.start_threshold);
    }
    core.ring.header()->wake_threshold.store(core.wake_frames, std::memory_order_relaxed);
    if (core.started) {
        core.ring.set_flags(audiod::kClientFlagStarted, 0);
    }
    // Wake anyone polling the old eventfd, then put the new one in its place
    // so the descriptor the player holds stays valid.
    core.wake();
    ::dup2(fresh.wake.get(), core.wake_fd.get());
    return true;
}

} // namespace audiod::client

extern "C" {

const char* audiod_format_name(int format) {
    return audiod::format_name(static_cast<audiod::SampleFormat>(format)).data();
}

int audiod_format_from_name(const char* name) {
    if (name == nullptr) {
        return AUDIOD_FORMAT_INVALID;
    }
    const auto format = audiod::parse_format(name);
    return format ? static_cast<int>(*format) : AUDIOD_FORMAT_INVALID;
}

unsigned audiod_format_sample_bytes(int format) {
    return audiod::sample_bytes(static_cast<audiod::SampleFormat>(format));
}

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
    fresh.wake.reset(::dup(core->wake_fd.get())); // rebind() dup2s this onto itself
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

long audiod_stream_writable(const audiod_stream* stream) {
    if (stream == nullptr) {
        return AUDIOD_E_INVALID;
    }
    StreamCore& core = *stream->core;
    std::lock_guard lock(core.mutex);
    if (core.record) {
        return AUDIOD_E_BADSTATE;
    }
    return static_cast<long>(core.capacity_locked() - core.queued_locked(MonoClock::now()));
}

long audiod_stream_readable(const audiod_stream* stream) {
    if (stream == nullptr) {
        return AUDIOD_E_INVALID;
    }
    StreamCore& core = *stream->core;
    std::lock_guard lock(core.mutex);
    if (!core.record) {
        return AUDIOD_E_BADSTATE;
    }
    return static_cast<long>(core.ready_locked(MonoClock::now()));
}

long audiod_stream_read(audiod_stream* stream, void* data, size_t frames, int timeout_ms) {
    if (stream == nullptr || (data == nullptr && frames > 0)) {
        return AUDIOD_E_INVALID;
    }
    StreamCore& core = *stream->core;
    if (!core.record) {
        return AUDIOD_E_BADSTATE;
    }
    frames = std::min<size_t>(frames, LONG_MAX);
    const Deadline deadline = transfer_deadline(frames, core.rate, timeout_ms);
    auto* dst = static_cast<uint8_t*>(data);
    size_t done = 0;
    while (done < frames) {
        std::chrono::nanoseconds keep_clock_wait{0};
        {
            std::lock_guard lock(core.mutex);
            if (core.broken) {
                return done > 0 ? static_cast<long>(done) : core.broken_code;
            }
            const auto now = MonoClock::now();
            const uint64_t n = std::min<uint64_t>(core.ready_locked(now), frames - done);
            if (core.keeping_clock) {
                // Nobody records: the clock delivers, at the nominal pace,
                // what the server had recorded before it went, then silence.
                const uint64_t from_ring =
                    core.client_pos < core.recorded_in_ring
                        ? std::min<uint64_t>(n, core.recorded_in_ring - core.client_pos)
                        : 0;
                if (from_ring > 0) {
                    core.ring.read(core.client_pos - core.ring_base, dst + done * core.frame_bytes,
                                   from_ring);
                }
                std::memset(dst + (done + from_ring) * core.frame_bytes, 0,
                            (n - from_ring) * core.frame_bytes);
                core.client_pos += n;
                done += n;
                if (done == frames) {
                    break;
                }
                keep_clock_wait = core.clock.time_for(
                    std::min<uint64_t>(frames - done, std::max<uint32_t>(1, core.wake_frames)));
            } else if (n > 0) {
                core.ring.read(core.client_pos - core.ring_base, dst + done * core.frame_bytes, n);
                core.client_pos += n;
                done += n;
                continue;
            } else {
                // Nothing yet: clear old wake-ups, then look again, so one
                // landing in between stays pending.
                drain_wakeups(core.wake_fd.get());
                if (core.ready_locked(now) > 0) {
                    continue;
                }
            }
        }
        if (timeout_ms == 0 || deadline.expired() ||
            wait_for_progress(core, keep_clock_wait, deadline) == AUDIOD_E_TIMEOUT) {
            break;
        }
    }
    return transfer_result(done, frames, timeout_ms);
}

long audiod_stream_write(audiod_stream* stream, const void* data, size_t frames, int timeout_ms) {
    if (stream == nullptr || (data == nullptr && frames > 0)) {
        return AUDIOD_E_INVALID;
    }
    StreamCore& core = *stream->core;
    if (core.record) {
        return AUDIOD_E_BADSTATE;
    }
    frames = std::min<size_t>(frames, LONG_MAX);
    const Deadline deadline = transfer_deadline(frames, core.rate, timeout_ms);
    const auto* src = static_cast<const uint8_t*>(data);
    size_t written = 0;
    while (written < frames) {
        std::chrono::nanoseconds keep_clock_wait{0};
        {
            std::lock_guard lock(core.mutex);
            if (core.broken) {
                return written > 0 ? static_cast<long>(written) : core.broken_code;
            }
            const auto now = MonoClock::now();
            const uint64_t room = core.capacity_locked() - core.queued_locked(now);
            const uint64_t n = std::min<uint64_t>(room, frames - written);
            if (core.keeping_clock) {
                // Nobody plays it: take the frames at the stream's own pace.
                core.client_pos += n;
                written += n;
                if (written == frames) {
                    break;
                }
                keep_clock_wait =
                    core.clock.time_for(std::min<uint64_t>(frames - written, core.wake_frames));
            } else if (n > 0) {
                core.ring.write(core.client_pos - core.ring_base, src + written * core.frame_bytes,
                                n);
                core.client_pos += n;
                written += n;
                core.ring.set_flags(0, audiod::kClientFlagDraining);
                if (!core.manual_start && core.queued_locked(now) >= core.start_threshold) {
                    core.ring.set_flags(audiod::kClientFlagStarted, 0);
                }
                continue;
            } else {
                // Full: the server must be consuming for room to appear (it
                // starts a full ring by itself, whatever the start mode).
                if (!core.manual_start) {
                    core.ring.set_flags(audiod::kClientFlagStarted, 0);
                }
                // Clear old wake-ups, then re-check: a wake-up that lands
                // after the check stays pending in the eventfd.
                drain_wakeups(core.wake_fd.get());
                if (core.capacity_locked() > core.queued_locked(now)) {
                    continue;
                }
            }
        }
        if (timeout_ms == 0 || deadline.expired() ||
            wait_for_progress(core, keep_clock_wait, deadline) == AUDIOD_E_TIMEOUT) {
            break;
        }
    }
    return transfer_result(written, frames, timeout_ms);
}

int audiod_stream_fd(const audiod_stream* stream) {
    return stream != nullptr ? stream->core->wake_fd.get() : AUDIOD_E_INVALID;
}

void audiod_stream_ack_wakeup(audiod_stream* stream) {
    if (stream != nullptr) {
        drain_wakeups(stream->core->wake_fd.get());
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

int audiod_stream_drain(audiod_stream* stream, int timeout_ms) {
    if (stream == nullptr) {
        return AUDIOD_E_INVALID;
    }
    StreamCore& core = *stream->core;
    if (core.record) {
        return AUDIOD_E_BADSTATE;
    }
    uint32_t latency = 0;
    uint64_t queued = 0;
    {
        std::lock_guard lock(core.mutex);
        queued = core.queued_locked(MonoClock::now());
        core.started = true;
        if (core.ring.bound() && !core.keeping_clock) {
            latency = core.ring.header()->sink_latency_frames.load(std::memory_order_relaxed);
            core.ring.set_flags(audiod::kClientFlagStarted | audiod::kClientFlagDraining, 0);
        }
    }
    const int64_t bound = timeout_ms >= 0
                              ? timeout_ms
                              : static_cast<int64_t>(frames_to_ms(queued + latency, core.rate)) +
                                    AUDIOD_DEFAULT_TIMEOUT_MS;
    const Deadline deadline = Deadline::after_ms(bound);
    for (;;) {
        std::chrono::nanoseconds keep_clock_wait{0};
        {
            std::lock_guard lock(core.mutex);
            if (core.broken) {
                return core.broken_code;
            }
            if (!core.keeping_clock) {
                drain_wakeups(core.wake_fd.get());
            }
            queued = core.queued_locked(MonoClock::now());
            if (queued == 0) {
                break;
            }
            if (core.keeping_clock) {
                keep_clock_wait = core.clock.time_for(queued);
            } else {
                // A stream re-bound after a new server came up drains there.
                core.ring.set_flags(audiod::kClientFlagStarted | audiod::kClientFlagDraining, 0);
            }
        }
        if (deadline.expired() ||
            wait_for_progress(core, keep_clock_wait, deadline) == AUDIOD_E_TIMEOUT) {
            return AUDIOD_E_TIMEOUT;
        }
    }
    // Everything has left the ring; what is still inside the sink's device
    // buffer plays within its latency.
    if (latency > 0) {
        const uint64_t ns = uint64_t{latency} * 1'000'000'000 / core.rate;
        timespec wait{static_cast<time_t>(ns / 1'000'000'000),
                      static_cast<long>(ns % 1'000'000'000)};
        while (nanosleep(&wait, &wait) != 0 && errno == EINTR) {
        }
    }
    return 0;
}

static int set_paused(audiod_stream* stream, bool paused, int timeout_ms) {
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

int audiod_stream_pause(audiod_stream* stream, int timeout_ms) {
    return set_paused(stream, true, timeout_ms);
}

int audiod_stream_resume(audiod_stream* stream, int timeout_ms) {
    return set_paused(stream, false, timeout_ms);
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
