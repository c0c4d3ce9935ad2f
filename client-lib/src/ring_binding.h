// A stream's mapping of one server-created ring (see ring_layout.h for the
// protocol). A stream may be re-bound to a new ring when the server is
// replaced; the binding owns the mapping and unmaps it.
#pragma once

#include "protocol/messages.h"
#include "protocol/ring_layout.h"

#include <cstdint>

namespace audiod::client {

class RingBinding {
public:
    RingBinding() = default;
    RingBinding(const RingBinding&) = delete;
    RingBinding& operator=(const RingBinding&) = delete;
    RingBinding(RingBinding&& other) noexcept { *this = std::move(other); }
    RingBinding& operator=(RingBinding&& other) noexcept;
    ~RingBinding() { reset(); }

    // Checks what the server sent against the memfd and maps it. Returns 0
    // or an AUDIOD_E_* code.
    [[nodiscard]] int map(const proto::StreamCreated& created, int memfd, uint32_t frame_bytes);
    void reset() noexcept;

    [[nodiscard]] bool bound() const noexcept { return header_ != nullptr; }
    [[nodiscard]] RingHeader* header() const noexcept { return header_; }
    [[nodiscard]] uint64_t capacity() const noexcept { return capacity_; }

    // Frames queued, given the client's write position in this ring. A read
    // position outside [write_pos - capacity, write_pos] means a broken
    // server; treat the ring as full so nothing unread is overwritten.
    [[nodiscard]] uint64_t queued(uint64_t ring_write_pos) const noexcept {
        const uint64_t read_pos = header_->read_pos.load(std::memory_order_acquire);
        const uint64_t queued = ring_write_pos - read_pos;
        return queued > capacity_ ? capacity_ : queued;
    }

    // Copies frames in at ring position `ring_write_pos` (wrapping) and
    // publishes the new write position.
    void write(uint64_t ring_write_pos, const uint8_t* src, uint64_t frames) noexcept;

    // Record streams (roles swapped, see ring_layout.h): frames the server
    // has written past the client's read position `ring_read_pos` (a server
    // position outside [ring_read_pos, ring_read_pos + capacity] reads as
    // nothing), and copying them out, publishing the new read position.
    [[nodiscard]] uint64_t ready(uint64_t ring_read_pos) const noexcept {
        const uint64_t server_pos = header_->read_pos.load(std::memory_order_acquire);
        const uint64_t ready = server_pos - ring_read_pos;
        return ready > capacity_ ? 0 : ready;
    }
    void read(uint64_t ring_read_pos, uint8_t* dst, uint64_t frames) noexcept;

    void set_flags(uint32_t set, uint32_t clear) noexcept;

private:
    void* mapping_ = nullptr;
    size_t bytes_ = 0;
    RingHeader* header_ = nullptr;
    uint8_t* data_ = nullptr;
    uint64_t capacity_ = 0;
    uint32_t frame_bytes_ = 0;
};

} // namespace audiod::client
