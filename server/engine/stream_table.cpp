#include "engine/stream_table.h"

#include "audiod/audiod.h"
#include "device/device.h"
#include "engine/gains.h"
#include "log.h"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <sys/eventfd.h>

namespace audiod {

std::variant<std::unique_ptr<Stream>, ClientError> StreamTable::make(const StreamRequest& request,
                                                                     Placement placement,
                                                                     uint64_t largest_cycle,
                                                                     uint32_t client_memory_mb) {
    const proto::CreateStream& p = request.params;
    const auto format = static_cast<SampleFormat>(p.format);
    if (!is_known_format(p.format)) {
        return ClientError{AUDIOD_E_INVALID, "unknown sample format " + std::to_string(p.format)};
    }
    if (format == SampleFormat::invalid) {
        return ClientError{AUDIOD_E_INVALID, "sample format must not be 'invalid'"};
    }
    if (p.rate < AUDIOD_MIN_RATE || p.rate > AUDIOD_MAX_RATE) {
        return ClientError{AUDIOD_E_NOTSUPPORTED, "rate " + std::to_string(p.rate) +
                                                      " Hz is outside " +
                                                      std::to_string(AUDIOD_MIN_RATE) + ".." +
                                                      std::to_string(AUDIOD_MAX_RATE) + " Hz"};
    }
    if (p.channels < 1 || p.channels > kMaxChannels) {
        return ClientError{AUDIOD_E_NOTSUPPORTED, std::to_string(p.channels) +
                                                      " channels: between 1 and " +
                                                      std::to_string(kMaxChannels) + " please"};
    }
    if (!std::isfinite(p.volume) || p.volume < 0 || p.volume > kMaxGain) {
        return ClientError{AUDIOD_E_INVALID, "volume must be between 0 and 4"};
    }
    const size_t owned = std::count_if(streams_.begin(), streams_.end(), [&](const auto& entry) {
        return entry.second->client_id == request.client_id;
    });
    if (owned >= kMaxStreamsPerClient) {
        return ClientError{AUDIOD_E_REFUSED, "too many streams for one client"};
    }
    const Device& device = *placement.device();
    if (count_on(device) >= Device::kMaxStreams) {
        return ClientError{AUDIOD_E_BUSY, "sink '" + device.name() + "' has too many streams"};
    }

    // At least two of the largest cycle's worth of the stream's frames, so
    // that the client can write one while we read one, wherever it moves.
    const uint64_t wanted_frames = p.buffer_frames == 0 ? p.rate / 10 : p.buffer_frames;
    const uint64_t capacity =
        std::clamp<uint64_t>(wanted_frames, 2 * (largest_cycle + 4), 10 * uint64_t{p.rate});

    // Shared memory is the server's to give: one client may not take more
    // than its share, however many streams it asks for.
    size_t in_use = 0;
    for (const auto& [other_id, other] : streams_) {
        if (other->client_id == request.client_id && !other->placement.closing()) {
            in_use += other->ring.memory_bytes();
        }
    }
    const uint64_t asked = ring_memory_bytes(capacity, p.channels * sample_bytes(format));
    const uint64_t limit = uint64_t{client_memory_mb} << 20;
    if (request.client_id != 0 && in_use + asked > limit) {
        const auto mb = [](uint64_t bytes) { return std::to_string((bytes + (1 << 19)) >> 20); };
        return ClientError{AUDIOD_E_REFUSED,
                           "a stream of " + mb(asked) +
                               " MB would take this client past its shared-memory limit (" +
                               mb(in_use) + " MB in use of " + std::to_string(client_memory_mb) +
                               " MB; [server] client-memory-mb)"};
    }

    const uint32_t id = next_id_++;
    auto ring = StreamRing::create(id, format, p.rate, p.channels, capacity);
    if (auto* error = std::get_if<std::string>(&ring)) {
        log_error("engine", "cannot create stream ring: " + *error);
        return ClientError{AUDIOD_E_NOMEM, "cannot create the stream's buffer: " + *error};
    }
    UniqueFd wake(::eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC));
    if (!wake) {
        return ClientError{AUDIOD_E_SYSTEM, std::string("eventfd: ") + std::strerror(errno)};
    }
    auto stream = std::make_unique<Stream>(std::move(std::get<StreamRing>(ring)), std::move(wake));
    stream->id = id;
    stream->client_id = request.client_id;
    stream->pid = request.pid;
    stream->app = request.app;
    stream->placement = std::move(placement);
    stream->format = format;
    stream->rate = p.rate;
    stream->channels = p.channels;
    stream->record = p.direction == static_cast<uint32_t>(proto::StreamDirection::record);
    stream->volume = p.volume;
    return stream;
}

Stream& StreamTable::add(std::unique_ptr<Stream> stream) {
    Stream& added = *stream;
    streams_.emplace(added.id, std::move(stream));
    return added;
}

Stream* StreamTable::find(uint32_t id) const {
    const auto it = streams_.find(id);
    return it == streams_.end() || it->second->placement.closing() ? nullptr : it->second.get();
}

size_t StreamTable::count_on(const Device& device) const {
    return static_cast<size_t>(std::count_if(streams_.begin(), streams_.end(), [&](const auto& e) {
        return e.second->placement.device() == &device;
    }));
}

} // namespace audiod
