#include "device/stream.h"

#include "os/memory_lock.h"

#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <new>
#include <sys/mman.h>
#include <unistd.h>

namespace audiod {

std::variant<StreamRing, std::string> StreamRing::create(uint32_t stream_id, SampleFormat format,
                                                         uint32_t rate, uint32_t channels,
                                                         uint64_t capacity_frames) {
    const uint32_t frame_bytes = sample_bytes(format) * channels;
    const size_t bytes = ring_memory_bytes(capacity_frames, frame_bytes);
    if (bytes == 0) {
        return std::string("buffer size out of range");
    }
    const std::string name = "audiod-stream-" + std::to_string(stream_id);
    UniqueFd fd(::memfd_create(name.c_str(), MFD_CLOEXEC | MFD_ALLOW_SEALING));
    if (!fd) {
        return std::string("memfd_create: ") + std::strerror(errno);
    }
    if (::ftruncate(fd.get(), static_cast<off_t>(bytes)) != 0) {
        return std::string("ftruncate: ") + std::strerror(errno);
    }
    // Sealing the size means a client can never shrink the file under our
    // mapping (which would turn our next read into SIGBUS).
    if (::fcntl(fd.get(), F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL) != 0) {
        return std::string("sealing the ring: ") + std::strerror(errno);
    }
    void* mapping = ::mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd.get(), 0);
    if (mapping == MAP_FAILED) {
        return std::string("mmap: ") + std::strerror(errno);
    }
    StreamRing ring;
    ring.memfd_ = std::move(fd);
    ring.mapping_ = mapping;
    ring.bytes_ = bytes;
    ring.capacity_ = capacity_frames;
    ring.frame_bytes_ = frame_bytes;
    ring.data_ = static_cast<uint8_t*>(mapping) + kRingDataOffset;
    // The fresh memfd is zero-filled, which is a valid state for every atomic
    // on this platform; construct the header in place to make that explicit.
    auto* header = new (mapping) RingHeader{};
    header->magic = kRingMagic;
    header->version = kRingVersion;
    header->format = static_cast<uint32_t>(format);
    header->rate = rate;
    header->channels = channels;
    header->frame_bytes = frame_bytes;
    header->capacity_frames = capacity_frames;
    header->data_offset = kRingDataOffset;
    header->sink_start_frame.store(kNoFrame, std::memory_order_relaxed);
    ring.header_ = header;
    lock_memory(mapping, bytes);
    return ring;
}

StreamRing::StreamRing(StreamRing&& other) noexcept
    : memfd_(std::move(other.memfd_))
    , mapping_(std::exchange(other.mapping_, nullptr))
    , bytes_(std::exchange(other.bytes_, 0))
    , header_(std::exchange(other.header_, nullptr))
    , data_(std::exchange(other.data_, nullptr))
    , capacity_(other.capacity_)
    , frame_bytes_(other.frame_bytes_) {}

StreamRing::~StreamRing() {
    if (mapping_ != nullptr) {
        unlock_memory(mapping_, bytes_);
        ::munmap(mapping_, bytes_);
    }
}

void flush_stream(Stream& stream, uint64_t position) noexcept {
    Stream::Rt& rt = stream.rt;
    RingHeader* header = stream.ring.header();
    const uint64_t client_pos = header->client_pos.load(std::memory_order_acquire);
    const uint64_t queued = client_pos - rt.server_pos;
    // Unsigned: a position behind server_pos or past client_pos is huge.
    if (queued <= stream.ring.capacity() && position - rt.server_pos <= queued) {
        rt.server_pos = position;
        header->server_pos.store(rt.server_pos, std::memory_order_release);
        stream.consumed.store(rt.server_pos, std::memory_order_relaxed);
    }
    rt.started = false;
    stream.starved_cycles.store(0, std::memory_order_relaxed);
    stream.rt_status.store(RtStreamStatus::prebuffering, std::memory_order_relaxed);
    if (stream.conversion.resampler) {
        stream.conversion.resampler->reset(); // no tail of the dropped audio
    }
}

} // namespace audiod
