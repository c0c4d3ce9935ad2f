#include "helper_ring.h"

#include <cstring>
#include <unistd.h>

namespace audiod::portaudio {

void wake_other_side(int eventfd) noexcept {
    const uint64_t one = 1;
    [[maybe_unused]] const ssize_t n = ::write(eventfd, &one, sizeof one);
}

void copy_into_ring(unsigned char* ring, uint32_t capacity, uint32_t frame_bytes, uint64_t at,
                    const void* from, uint32_t count) noexcept {
    const auto* bytes = static_cast<const unsigned char*>(from);
    const uint32_t first = helper_ring_first_piece(capacity, at, count);
    std::memcpy(ring + (at % capacity) * frame_bytes, bytes, size_t{first} * frame_bytes);
    std::memcpy(ring, bytes + size_t{first} * frame_bytes, size_t{count - first} * frame_bytes);
}

void copy_out_of_ring(const unsigned char* ring, uint32_t capacity, uint32_t frame_bytes,
                      uint64_t at, void* to, uint32_t count) noexcept {
    auto* bytes = static_cast<unsigned char*>(to);
    const uint32_t first = helper_ring_first_piece(capacity, at, count);
    std::memcpy(bytes, ring + (at % capacity) * frame_bytes, size_t{first} * frame_bytes);
    std::memcpy(bytes + size_t{first} * frame_bytes, ring, size_t{count - first} * frame_bytes);
}

} // namespace audiod::portaudio
