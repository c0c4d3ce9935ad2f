#include "pulse/frame.h"

#include <algorithm>

namespace audiod::pulse {

namespace {

uint32_t read_u32(const uint8_t* at) {
    return uint32_t{at[0]} << 24 | uint32_t{at[1]} << 16 | uint32_t{at[2]} << 8 | at[3];
}

void write_u32(uint8_t* at, uint32_t value) {
    at[0] = static_cast<uint8_t>(value >> 24);
    at[1] = static_cast<uint8_t>(value >> 16);
    at[2] = static_cast<uint8_t>(value >> 8);
    at[3] = static_cast<uint8_t>(value);
}

} // namespace

std::array<uint8_t, kFrameHeaderBytes> frame_header(uint32_t payload_bytes, uint32_t channel,
                                                    int64_t offset, uint32_t flags) {
    std::array<uint8_t, kFrameHeaderBytes> header{};
    const auto bits = static_cast<uint64_t>(offset);
    write_u32(header.data(), payload_bytes);
    write_u32(header.data() + 4, channel);
    write_u32(header.data() + 8, static_cast<uint32_t>(bits >> 32));
    write_u32(header.data() + 12, static_cast<uint32_t>(bits));
    write_u32(header.data() + 16, flags);
    return header;
}

std::vector<uint8_t> frame_packet(std::span<const uint8_t> packet) {
    // Sized once and filled by copy: GCC 12 at -O3 misreads a vector grown by
    // insert() after the header as an out-of-bounds memcpy (-Warray-bounds).
    const auto header = frame_header(static_cast<uint32_t>(packet.size()));
    std::vector<uint8_t> out(header.size() + packet.size());
    std::copy(header.begin(), header.end(), out.begin());
    std::copy(packet.begin(), packet.end(),
              out.begin() + static_cast<std::ptrdiff_t>(header.size()));
    return out;
}

std::array<uint8_t, kFrameHeaderBytes> frame_release(uint32_t block_id) {
    return frame_header(0, kControlChannel, static_cast<int64_t>(uint64_t{block_id} << 32),
                        kShmRelease);
}

bool FrameReader::start_payload() {
    const uint32_t length = read_u32(header_.data());
    const uint32_t channel = read_u32(header_.data() + 4);
    const uint32_t flags = read_u32(header_.data() + 16);
    if (length == 0 || length > max_frame_bytes_) {
        error_ = "a frame of " + std::to_string(length) + " bytes (1 to " +
                 std::to_string(max_frame_bytes_) + ")";
        return false;
    }
    if (const uint32_t shm = flags & kShmFlagsMask; shm != 0) {
        if (!shared_memory_) {
            error_ = "a frame in shared memory, which was not agreed on";
            return false;
        }
        // Only audio by reference comes this way: the peer never holds a
        // block of ours to release or revoke.
        if (channel == kControlChannel || (shm != kShmData && shm != (kShmData | kShmMemfdBlock)) ||
            length != kSharedBlockBytes) {
            error_ = "a malformed shared-memory frame";
            return false;
        }
    }
    if (channel == kControlChannel && flags != 0) {
        error_ = "a command packet with flags";
        return false;
    }
    current_ = Frame{};
    current_.channel = channel;
    current_.offset = static_cast<int64_t>(uint64_t{read_u32(header_.data() + 8)} << 32 |
                                           read_u32(header_.data() + 12));
    current_.flags = flags;
    payload_length_ = length;
    in_payload_ = true;
    return true;
}

bool FrameReader::feed(std::span<const uint8_t> bytes) {
    if (!error_.empty()) {
        return false;
    }
    while (!bytes.empty()) {
        if (!in_payload_) {
            const size_t take = std::min(bytes.size(), kFrameHeaderBytes - header_fill_);
            std::copy_n(bytes.begin(), take,
                        header_.begin() + static_cast<std::ptrdiff_t>(header_fill_));
            header_fill_ += take;
            bytes = bytes.subspan(take);
            if (header_fill_ < kFrameHeaderBytes) {
                return true;
            }
            header_fill_ = 0;
            if (!start_payload()) {
                return false;
            }
            continue;
        }
        const size_t take =
            std::min<size_t>(bytes.size(), payload_length_ - current_.payload.size());
        current_.payload.insert(current_.payload.end(), bytes.begin(),
                                bytes.begin() + static_cast<std::ptrdiff_t>(take));
        bytes = bytes.subspan(take);
        if (current_.payload.size() == payload_length_) {
            in_payload_ = false;
            ready_.push_back(std::move(current_));
            current_ = Frame{};
        }
    }
    return true;
}

std::optional<Frame> FrameReader::next() {
    if (next_ready_ == ready_.size()) {
        ready_.clear();
        next_ready_ = 0;
        return std::nullopt;
    }
    return std::move(ready_[next_ready_++]);
}

size_t FrameReader::pending_bytes() const noexcept {
    size_t held = header_fill_ + current_.payload.size();
    for (size_t i = next_ready_; i < ready_.size(); ++i) {
        held += kFrameHeaderBytes + ready_[i].payload.size();
    }
    return held;
}

} // namespace audiod::pulse
