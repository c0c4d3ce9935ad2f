// Playback streams: the client side of the shared-memory ring.
//
// The client owns write_pos and the client block of the header; the server
// owns read_pos. Writing copies frames into the ring and publishes write_pos
// with release ordering; the server's acquire load of write_pos then sees
// the frames. Waiting for room uses the stream's eventfd, which the server
// signals only when free space crosses our wake-up threshold or the ring
// runs empty — so a client with a deep buffer wakes rarely.
#include "client_internal.h"
#include "sample_format.h"

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cmath>
#include <cstring>
#include <new>
#include <poll.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>

using audiod::Deadline;
using audiod::RingHeader;
namespace proto = audiod::proto;

namespace {

constexpr uint32_t kDefaultLatencyMs = 100;
constexpr uint32_t kMaxLatencyMs = 10'000;

uint64_t frames_to_ms(uint64_t frames, uint32_t rate) {
    return rate == 0 ? 0 : (frames * 1000 + rate - 1) / rate;
}

// Frames queued in the ring, as the client sees it. A server that reports a
// read position outside [write_pos - capacity, write_pos] is broken; treat
// the ring as full so we stop writing rather than overwrite unread data.
uint64_t queued_frames(const audiod_stream* s) {
    const uint64_t read_pos = s->header->read_pos.load(std::memory_order_acquire);
    const uint64_t queued = s->write_pos - read_pos;
    return queued > s->capacity ? s->capacity : queued;
}

void set_client_flags(audiod_stream* s, uint32_t set, uint32_t clear) {
    const uint32_t flags = s->header->client_flags.load(std::memory_order_relaxed);
    s->header->client_flags.store((flags | set) & ~clear, std::memory_order_release);
}

void drain_wakeups(audiod_stream* s) {
    uint64_t count = 0;
    [[maybe_unused]] const ssize_t r = ::read(s->wake_fd.get(), &count, sizeof count);
}

// Waits for a server wake-up (or the server hanging up), until the deadline.
int wait_wakeup(audiod_stream* s, const Deadline& deadline) {
    pollfd fds[2] = {{s->wake_fd.get(), POLLIN, 0}, {s->context->channel.fd(), POLLRDHUP, 0}};
    for (;;) {
        const int ready = ::poll(fds, 2, deadline.poll_timeout_ms());
        if (ready < 0 && errno == EINTR) {
            if (deadline.expired()) {
                return AUDIOD_E_TIMEOUT;
            }
            continue;
        }
        if (ready < 0) {
            return AUDIOD_E_SYSTEM;
        }
        if (ready == 0) {
            return AUDIOD_E_TIMEOUT;
        }
        if ((fds[1].revents & (POLLRDHUP | POLLHUP | POLLERR)) != 0) {
            return AUDIOD_E_DISCONNECTED;
        }
        return 0;
    }
}

void copy_into_ring(audiod_stream* s, const uint8_t* src, uint64_t frames) {
    const uint64_t offset = s->write_pos % s->capacity;
    const uint64_t first = std::min(frames, s->capacity - offset);
    std::memcpy(s->data + offset * s->frame_bytes, src, first * s->frame_bytes);
    if (first < frames) {
        std::memcpy(s->data, src + first * s->frame_bytes, (frames - first) * s->frame_bytes);
    }
}

void release_mapping(audiod_stream* s) {
    if (s->mapping != nullptr) {
        ::munmap(s->mapping, s->mapping_bytes);
        s->mapping = nullptr;
        s->header = nullptr;
        s->data = nullptr;
    }
}

// Validates what the server sent and maps the ring. Returns 0 or AUDIOD_E_*.
int map_ring(audiod_stream* s, const proto::StreamCreated& created, int memfd) {
    struct stat st {};
    if (::fstat(memfd, &st) != 0 || st.st_size < 0 ||
        static_cast<uint64_t>(st.st_size) != created.memory_bytes ||
        audiod::ring_memory_bytes(created.capacity_frames, s->frame_bytes) !=
            created.memory_bytes) {
        return AUDIOD_E_PROTOCOL;
    }
    void* mapping =
        ::mmap(nullptr, created.memory_bytes, PROT_READ | PROT_WRITE, MAP_SHARED, memfd, 0);
    if (mapping == MAP_FAILED) {
        return AUDIOD_E_SYSTEM;
    }
    s->mapping = mapping;
    s->mapping_bytes = created.memory_bytes;
    s->header = static_cast<RingHeader*>(mapping);
    s->data = static_cast<uint8_t*>(mapping) + audiod::kRingDataOffset;
    if (s->header->magic != audiod::kRingMagic || s->header->version != audiod::kRingVersion) {
        release_mapping(s);
        return AUDIOD_E_VERSION;
    }
    s->capacity = created.capacity_frames;
    s->write_pos = s->header->write_pos.load(std::memory_order_relaxed);
    return 0;
}

} // namespace

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
}

int audiod_stream_create(audiod_context* ctx, const audiod_stream_params* params,
                         audiod_stream** out) {
    if (ctx == nullptr || params == nullptr || out == nullptr) {
        return AUDIOD_E_INVALID;
    }
    *out = nullptr;
    const unsigned bytes = audiod_format_sample_bytes(params->format);
    if (bytes == 0 || params->channels == 0 || params->channels > 64 || params->rate == 0 ||
        params->latency_ms > kMaxLatencyMs || std::isnan(params->volume)) {
        return AUDIOD_E_INVALID;
    }
    const uint32_t latency_ms = params->latency_ms == 0 ? kDefaultLatencyMs : params->latency_ms;

    proto::CreateStream request;
    request.format = static_cast<uint32_t>(params->format);
    request.rate = params->rate;
    request.channels = params->channels;
    request.buffer_frames =
        static_cast<uint32_t>((uint64_t{params->rate} * latency_ms + 999) / 1000);
    request.sink = params->sink != nullptr ? params->sink : "";
    request.volume = params->volume < 0 ? 1.0f : params->volume;

    proto::Packet reply;
    const int rc = ctx->call(request, proto::MsgType::stream_created, &reply,
                             Deadline::after_ms(AUDIOD_DEFAULT_TIMEOUT_MS));
    if (rc != 0) {
        return rc;
    }
    proto::StreamCreated created;
    if (!proto::decode(proto::parse_envelope(reply.bytes)->body, created) ||
        reply.fds.size() != 2 || created.capacity_frames == 0) {
        return AUDIOD_E_PROTOCOL;
    }

    auto* s = new (std::nothrow) audiod_stream;
    if (s == nullptr) {
        return AUDIOD_E_NOMEM;
    }
    s->context = ctx;
    s->id = created.stream_id;
    s->format = params->format;
    s->rate = params->rate;
    s->channels = params->channels;
    s->frame_bytes = bytes * params->channels;
    s->quantum = created.quantum;
    s->wake_fd = std::move(reply.fds[1]);
    const int mapped = map_ring(s, created, reply.fds[0].get());
    if (mapped != 0) {
        delete s;
        return mapped;
    }
    // Prebuffer half the ring before the server starts taking frames, so a
    // player that writes in small pieces does not underrun at once.
    s->start_threshold = std::max<uint64_t>(1, s->capacity / 2);
    s->header->wake_free_frames.store(static_cast<uint32_t>(std::max<uint64_t>(1, s->capacity / 2)),
                                      std::memory_order_relaxed);
    {
        std::lock_guard lock(ctx->request_mutex);
        ctx->streams.insert(s);
    }
    *out = s;
    return 0;
}

uint32_t audiod_stream_id(const audiod_stream* stream) {
    return stream ? stream->id : 0;
}

uint32_t audiod_stream_buffer_frames(const audiod_stream* stream) {
    return stream ? static_cast<uint32_t>(stream->capacity) : 0;
}

long audiod_stream_writable(const audiod_stream* stream) {
    if (stream == nullptr) {
        return AUDIOD_E_INVALID;
    }
    return static_cast<long>(stream->capacity - queued_frames(stream));
}

long audiod_stream_write(audiod_stream* s, const void* data, size_t frames, int timeout_ms) {
    if (s == nullptr || (data == nullptr && frames > 0)) {
        return AUDIOD_E_INVALID;
    }
    if (frames > LONG_MAX) {
        frames = LONG_MAX;
    }
    const int64_t bound = timeout_ms >= 0 ? timeout_ms
                                          : static_cast<int64_t>(frames_to_ms(frames, s->rate)) +
                                                AUDIOD_DEFAULT_TIMEOUT_MS;
    const Deadline deadline = Deadline::after_ms(bound);
    const auto* src = static_cast<const uint8_t*>(data);
    size_t written = 0;
    set_client_flags(s, 0, audiod::kClientFlagDraining);
    while (written < frames) {
        const uint64_t room = s->capacity - queued_frames(s);
        const uint64_t n = std::min<uint64_t>(room, frames - written);
        if (n > 0) {
            copy_into_ring(s, src + written * s->frame_bytes, n);
            s->write_pos += n;
            s->header->write_pos.store(s->write_pos, std::memory_order_release);
            written += n;
            if (queued_frames(s) >= s->start_threshold) {
                set_client_flags(s, audiod::kClientFlagStarted, 0);
            }
            continue;
        }
        // Full: the server must be consuming for room to appear.
        set_client_flags(s, audiod::kClientFlagStarted, 0);
        if (timeout_ms == 0) {
            break;
        }
        // Clear old wake-ups, then re-check: a wake-up that lands after the
        // check stays pending in the eventfd, so none is lost.
        drain_wakeups(s);
        if (s->capacity - queued_frames(s) > 0) {
            continue;
        }
        const int waited = wait_wakeup(s, deadline);
        if (waited == AUDIOD_E_TIMEOUT) {
            break;
        }
        if (waited != 0) {
            return written > 0 ? static_cast<long>(written) : waited;
        }
    }
    if (written == 0 && frames > 0) {
        return timeout_ms == 0 ? AUDIOD_E_AGAIN : AUDIOD_E_TIMEOUT;
    }
    return static_cast<long>(written);
}

int audiod_stream_fd(const audiod_stream* stream) {
    return stream != nullptr ? stream->wake_fd.get() : AUDIOD_E_INVALID;
}

void audiod_stream_ack_wakeup(audiod_stream* stream) {
    if (stream != nullptr) {
        drain_wakeups(stream);
    }
}

int audiod_stream_set_wakeup_frames(audiod_stream* stream, uint32_t frames) {
    if (stream == nullptr || frames == 0 || frames > stream->capacity) {
        return AUDIOD_E_INVALID;
    }
    stream->header->wake_free_frames.store(frames, std::memory_order_relaxed);
    return 0;
}

int audiod_stream_drain(audiod_stream* s, int timeout_ms) {
    if (s == nullptr) {
        return AUDIOD_E_INVALID;
    }
    const uint32_t latency = s->header->sink_latency_frames.load(std::memory_order_relaxed);
    const int64_t bound =
        timeout_ms >= 0 ? timeout_ms
                        : static_cast<int64_t>(frames_to_ms(queued_frames(s) + latency, s->rate)) +
                              AUDIOD_DEFAULT_TIMEOUT_MS;
    const Deadline deadline = Deadline::after_ms(bound);
    set_client_flags(s, audiod::kClientFlagStarted | audiod::kClientFlagDraining, 0);
    for (;;) {
        drain_wakeups(s);
        if (queued_frames(s) == 0) {
            break;
        }
        const int waited = wait_wakeup(s, deadline);
        if (waited != 0) {
            return waited;
        }
    }
    // Everything has left the ring; what is still inside the sink's device
    // buffer plays within its latency.
    if (latency > 0) {
        const uint64_t ns = uint64_t{latency} * 1'000'000'000 / s->rate;
        timespec wait{static_cast<time_t>(ns / 1'000'000'000),
                      static_cast<long>(ns % 1'000'000'000)};
        while (nanosleep(&wait, &wait) != 0 && errno == EINTR) {
        }
    }
    return 0;
}

static int stream_command(audiod_stream* s, proto::StreamOp op, int timeout_ms) {
    proto::StreamCommand command;
    command.stream_id = s->id;
    command.op = static_cast<uint32_t>(op);
    return s->context->call(
        command, proto::MsgType::ok, nullptr,
        Deadline::after_ms(timeout_ms < 0 ? AUDIOD_DEFAULT_TIMEOUT_MS : timeout_ms));
}

int audiod_stream_pause(audiod_stream* s, int timeout_ms) {
    return s != nullptr ? stream_command(s, proto::StreamOp::pause, timeout_ms) : AUDIOD_E_INVALID;
}

int audiod_stream_resume(audiod_stream* s, int timeout_ms) {
    return s != nullptr ? stream_command(s, proto::StreamOp::resume, timeout_ms) : AUDIOD_E_INVALID;
}

int audiod_stream_set_volume(audiod_stream* s, float volume, int timeout_ms) {
    if (s == nullptr || !std::isfinite(volume) || volume < 0) {
        return AUDIOD_E_INVALID;
    }
    proto::SetVolume request;
    request.target = static_cast<uint32_t>(proto::VolumeTarget::stream);
    request.stream_id = s->id;
    request.mode = static_cast<uint32_t>(proto::VolumeMode::absolute);
    request.value = volume;
    return s->context->call(
        request, proto::MsgType::ok, nullptr,
        Deadline::after_ms(timeout_ms < 0 ? AUDIOD_DEFAULT_TIMEOUT_MS : timeout_ms));
}

int audiod_stream_get_timing(const audiod_stream* s, audiod_stream_timing* timing) {
    if (s == nullptr || timing == nullptr) {
        return AUDIOD_E_INVALID;
    }
    const uint64_t queued = queued_frames(s);
    const uint64_t consumed = s->write_pos - queued;
    const uint32_t latency = s->header->sink_latency_frames.load(std::memory_order_relaxed);
    timing->written = s->write_pos;
    timing->consumed = consumed;
    timing->played = consumed > latency ? consumed - latency : 0;
    timing->delay_frames = queued + latency;
    timing->sink_start_frame = s->header->sink_start_frame.load(std::memory_order_acquire);
    timing->underruns = s->header->underruns.load(std::memory_order_relaxed);
    timing->rate = s->rate;
    return 0;
}

int audiod_stream_close(audiod_stream* s) {
    if (s == nullptr) {
        return 0;
    }
    const int rc = stream_command(s, proto::StreamOp::close, AUDIOD_DEFAULT_TIMEOUT_MS);
    {
        std::lock_guard lock(s->context->request_mutex);
        s->context->streams.erase(s);
    }
    release_mapping(s);
    delete s;
    return rc;
}

} // extern "C"
