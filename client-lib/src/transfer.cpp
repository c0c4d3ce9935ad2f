// Moving audio through a stream: one loop for reads and writes, and drain.
//
// Writing copies frames into the ring and publishes client_pos with release
// ordering; the server's acquire load then sees the frames (reading is the
// mirror image, ring_layout.h). Waiting uses the stream's eventfd (through
// an epoll set that reports each signal once, waiting.cpp), which the
// server signals only when the frames free (or ready) cross the client's
// wake-up threshold, or a playback ring runs low or empty; a writer on the
// edges also wakes itself just after the server's cycles (self_timing.h),
// and the server then signals it only when its ring is about to run dry.
// When the server is gone or stalled (supervisor.cpp decides), the stream
// keeps its clock: frames are consumed (or delivered) at the nominal rate,
// so nothing the player calls freezes, until the supervisor binds the
// stream to a live server.
#include "client_internal.h"
#include "waiting.h"

#include <cerrno>
#include <climits>
#include <time.h>

using audiod::Deadline;
using audiod::MonoClock;
using namespace audiod::client;

namespace {

// Moves up to `frames` frames between `buffer` and the stream, the way the
// stream goes: into it for playback (`buffer` is only read), out of it for
// record. Waits for room or frames up to timeout_ms; returns the frames
// moved, or AUDIOD_E_* if none.
long transfer(StreamCore& core, void* buffer, size_t frames, int timeout_ms) {
    frames = std::min<size_t>(frames, LONG_MAX);
    const Deadline deadline = transfer_deadline(frames, core.rate, timeout_ms);
    auto* bytes = static_cast<uint8_t*>(buffer);
    size_t done = 0;
    while (done < frames) {
        std::chrono::nanoseconds keep_clock_wait{0};
        MonoClock::time_point self_wake{};
        {
            std::lock_guard lock(core.mutex);
            if (core.broken) {
                return done > 0 ? static_cast<long>(done) : core.broken_code;
            }
            const auto now = MonoClock::now();
            const uint64_t n = std::min<uint64_t>(core.available_locked(now), frames - done);
            if (core.keeping_clock) {
                core.clock_transfer_locked(bytes + done * core.frame_bytes, n);
                done += n;
                if (done == frames) {
                    break;
                }
                keep_clock_wait = core.clock.time_for(
                    std::min<uint64_t>(frames - done, std::max<uint32_t>(1, core.wake_frames)));
            } else if (n > 0) {
                core.ring_transfer_locked(bytes + done * core.frame_bytes, n, now);
                done += n;
                continue;
            } else {
                // A full playback ring fills no further until the server
                // consumes, which it does for a full ring whatever the start
                // mode.
                if (!core.record && !core.manual_start) {
                    core.ring.set_flags(audiod::kClientFlagStarted, 0);
                }
                // Clear old wake-ups, then look again: one landing in
                // between stays pending in the eventfd. (Waiting on edges,
                // each wake-up after the look above is reported anew.)
                if (!waits_on_edges(core)) {
                    drain_wakeups(core.wake_fd.get());
                    if (core.available_locked(now) > 0) {
                        continue;
                    }
                }
                self_wake = self_timed_wake_locked(core, now);
            }
        }
        if (timeout_ms == 0 || deadline.expired() ||
            wait_for_progress(core, keep_clock_wait, deadline, self_wake) == AUDIOD_E_TIMEOUT) {
            break;
        }
    }
    return transfer_result(done, frames, timeout_ms);
}

} // namespace

extern "C" {

long audiod_stream_write(audiod_stream* stream, const void* data, size_t frames, int timeout_ms) {
    if (stream == nullptr || (data == nullptr && frames > 0)) {
        return AUDIOD_E_INVALID;
    }
    if (stream->core->record) {
        return AUDIOD_E_BADSTATE;
    }
    // transfer() only reads a playback stream's buffer.
    return transfer(*stream->core, const_cast<void*>(data), frames, timeout_ms);
}

long audiod_stream_read(audiod_stream* stream, void* data, size_t frames, int timeout_ms) {
    if (stream == nullptr || (data == nullptr && frames > 0)) {
        return AUDIOD_E_INVALID;
    }
    if (!stream->core->record) {
        return AUDIOD_E_BADSTATE;
    }
    return transfer(*stream->core, data, frames, timeout_ms);
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
    return static_cast<long>(core.available_locked(MonoClock::now()));
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
    return static_cast<long>(core.available_locked(MonoClock::now()));
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

} // extern "C"
