// StreamCore: a stream's state shared by the player's calls and the
// supervisor (client_internal.h), and binding it to a server's ring.
#include "client_internal.h"
#include "waiting.h"

#include <algorithm>
#include <cstring>
#include <fcntl.h>
#include <unistd.h>

namespace audiod::client {

namespace proto = audiod::proto;

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

void StreamCore::ring_transfer_locked(void* buffer, uint64_t frames, MonoClock::time_point now) {
    if (record) {
        ring.read(client_pos - ring_base, static_cast<uint8_t*>(buffer), frames);
        client_pos += frames;
        return;
    }
    ring.write(client_pos - ring_base, static_cast<const uint8_t*>(buffer), frames);
    client_pos += frames;
    ring.set_flags(0, audiod::kClientFlagDraining);
    if (!manual_start && queued_locked(now) >= start_threshold) {
        ring.set_flags(audiod::kClientFlagStarted, 0);
    }
}

void StreamCore::clock_transfer_locked(void* buffer, uint64_t frames) {
    if (record) {
        auto* out = static_cast<uint8_t*>(buffer);
        const uint64_t from_ring =
            client_pos < recorded_in_ring ? std::min(frames, recorded_in_ring - client_pos) : 0;
        if (from_ring > 0) {
            ring.read(client_pos - ring_base, out, from_ring);
        }
        std::memset(out + from_ring * frame_bytes, 0, (frames - from_ring) * frame_bytes);
    }
    client_pos += frames;
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
    request.device = sink;
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
    // so the descriptor the player holds stays valid, and wake that too: a
    // player between its last look at the ring and its poll polls the new
    // one, which the server does not signal until the new stream starts.
    // (A stress run's player so waited out its write's whole deadline on an
    // empty ring.)
    core.wake();
    unwatch_wake_fd(core);
    // dup3, not dup2: dup2 clears close-on-exec on the descriptor the
    // player holds, and every program it started after inherited it (the
    // soak's servers each held every recording's).
    ::dup3(fresh.wake.get(), core.wake_fd.get(), O_CLOEXEC);
    core.wake_fd_generation.fetch_add(1);
    watch_wake_fd(core);
    core.wake();
    return true;
}

} // namespace audiod::client
