#include "protocol/ring_binding.h"

#include "audiod/audiod.h"
#include "protocol/ring_view.h"

#include <sys/mman.h>
#include <sys/stat.h>
#include <utility>

namespace audiod {

RingBinding& RingBinding::operator=(RingBinding&& other) noexcept {
    if (this != &other) {
        reset();
        mapping_ = std::exchange(other.mapping_, nullptr);
        bytes_ = std::exchange(other.bytes_, 0);
        header_ = std::exchange(other.header_, nullptr);
        data_ = std::exchange(other.data_, nullptr);
        capacity_ = std::exchange(other.capacity_, 0);
        frame_bytes_ = other.frame_bytes_;
    }
    return *this;
}

int RingBinding::map(const proto::StreamCreated& created, int memfd, uint32_t frame_bytes) {
    reset();
    struct stat st {};
    if (::fstat(memfd, &st) != 0 || st.st_size < 0 ||
        static_cast<uint64_t>(st.st_size) != created.memory_bytes ||
        ring_memory_bytes(created.capacity_frames, frame_bytes) != created.memory_bytes) {
        return AUDIOD_E_PROTOCOL;
    }
    void* mapping =
        ::mmap(nullptr, created.memory_bytes, PROT_READ | PROT_WRITE, MAP_SHARED, memfd, 0);
    if (mapping == MAP_FAILED) {
        return AUDIOD_E_SYSTEM;
    }
    auto* header = static_cast<RingHeader*>(mapping);
    if (header->magic != kRingMagic || header->version != kRingVersion) {
        ::munmap(mapping, created.memory_bytes);
        return AUDIOD_E_VERSION;
    }
    mapping_ = mapping;
    bytes_ = created.memory_bytes;
    header_ = header;
    data_ = static_cast<uint8_t*>(mapping) + kRingDataOffset;
    capacity_ = created.capacity_frames;
    frame_bytes_ = frame_bytes;
    return 0;
}

void RingBinding::reset() noexcept {
    if (mapping_ != nullptr) {
        ::munmap(mapping_, bytes_);
    }
    mapping_ = nullptr;
    header_ = nullptr;
    data_ = nullptr;
    bytes_ = 0;
    capacity_ = 0;
}

void RingBinding::write(uint64_t client_pos, const uint8_t* src, uint64_t frames) noexcept {
    RingView(data_, capacity_, frame_bytes_).copy_in(client_pos, src, frames);
    header_->client_pos.store(client_pos + frames, std::memory_order_release);
}

void RingBinding::read(uint64_t client_pos, uint8_t* dst, uint64_t frames) noexcept {
    RingView(data_, capacity_, frame_bytes_).copy_out(client_pos, dst, frames);
    header_->client_pos.store(client_pos + frames, std::memory_order_release);
}

void RingBinding::set_flags(uint32_t set, uint32_t clear) noexcept {
    const uint32_t flags = header_->client_flags.load(std::memory_order_relaxed);
    header_->client_flags.store((flags | set) & ~clear, std::memory_order_release);
}

} // namespace audiod
