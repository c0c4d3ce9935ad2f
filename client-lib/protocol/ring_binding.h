// The client's side of one server-created ring (see ring_layout.h for the
// protocol): its mapping, and writing or reading it at the client's
// position. libaudiod's streams use it, and so does the server's pulse
// thread, which is a client of the engine's rings on behalf of libpulse
// programs. A stream may be re-bound to a new ring when the server is
// replaced; the binding owns the mapping and unmaps it.
#pragma once

#include "protocol/messages.h"
#include "protocol/ring_layout.h"

#include <cstdint>

namespace audiod {

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

    // Positions are this ring's (the stream's position minus where the ring
    // began); see ring_layout.h for the two of them.

    // Playback: frames queued at the client's position. A server position
    // outside [client_pos - capacity, client_pos] means a broken server;
    // treat the ring as full so nothing unplayed is overwritten.
    [[nodiscard]] uint64_t queued(uint64_t client_pos) const noexcept {
        const uint64_t server_pos = header_->server_pos.load(std::memory_order_acquire);
        const uint64_t queued = client_pos - server_pos;
        return queued > capacity_ ? capacity_ : queued;
    }
    // Copies frames in at the client's position and publishes the new one.
    void write(uint64_t client_pos, const uint8_t* src, uint64_t frames) noexcept;

    // Record: frames the server has written past the client's position (a
    // server position outside [client_pos, client_pos + capacity] reads as
    // nothing), and copying them out, publishing the new client position.
    [[nodiscard]] uint64_t ready(uint64_t client_pos) const noexcept {
        const uint64_t server_pos = header_->server_pos.load(std::memory_order_acquire);
        const uint64_t ready = server_pos - client_pos;
        return ready > capacity_ ? 0 : ready;
    }
    void read(uint64_t client_pos, uint8_t* dst, uint64_t frames) noexcept;

    void set_flags(uint32_t set, uint32_t clear) noexcept;

private:
    void* mapping_ = nullptr;
    size_t bytes_ = 0;
    RingHeader* header_ = nullptr;
    uint8_t* data_ = nullptr;
    uint64_t capacity_ = 0;
    uint32_t frame_bytes_ = 0;
};

} // namespace audiod
