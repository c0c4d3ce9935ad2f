// The data ring of a stream (ring_layout.h) as frames at monotonic
// positions: the one place that knows where frame n lives and that a run
// of frames may wrap once past the end. Used by both sides: libaudiod
// copying in and out, the server's RT cycle mixing straight from the ring.
// Thread: whichever owns the positions used; nothing allocates or locks.
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstring>

namespace audiod {

class RingView {
public:
    RingView(uint8_t* data, uint64_t capacity, uint32_t frame_bytes) noexcept
        : data_(data)
        , capacity_(capacity)
        , frame_bytes_(frame_bytes) {}

    // Calls piece(address, count, done) for the one or two contiguous pieces
    // that hold frames [pos, pos + frames): `done` frames come before it.
    // `frames` must not exceed the capacity.
    template <class Piece>
    void for_each_piece(uint64_t pos, uint64_t frames, Piece&& piece) const noexcept {
        const uint64_t offset = pos % capacity_;
        const uint64_t first = std::min(frames, capacity_ - offset);
        if (first > 0) {
            piece(data_ + offset * frame_bytes_, first, uint64_t{0});
        }
        if (first < frames) {
            piece(data_, frames - first, first);
        }
    }

    void copy_in(uint64_t pos, const uint8_t* src, uint64_t frames) const noexcept {
        for_each_piece(pos, frames, [&](uint8_t* at, uint64_t count, uint64_t done) {
            std::memcpy(at, src + done * frame_bytes_, count * frame_bytes_);
        });
    }

    void copy_out(uint64_t pos, uint8_t* dst, uint64_t frames) const noexcept {
        for_each_piece(pos, frames, [&](const uint8_t* at, uint64_t count, uint64_t done) {
            std::memcpy(dst + done * frame_bytes_, at, count * frame_bytes_);
        });
    }

private:
    uint8_t* data_;
    uint64_t capacity_;
    uint32_t frame_bytes_;
};

} // namespace audiod
