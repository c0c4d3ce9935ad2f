// Frames: how the PulseAudio native protocol cuts its byte stream. Every
// frame is a 20-byte header of five big-endian u32 — payload length,
// channel, the offset's high and low halves, flags — then the payload:
// a command packet (channel kControlChannel, flags 0) or audio for the
// stream of that channel (offset and the low flag byte: where it goes,
// the seek mode). The high flag byte marks shared memory: an audio frame
// whose payload says where the audio is in the client's memory pool
// (shared_memory.h), allowed once the handshake agreed on it, and the
// release a receiver sends back for such a block.
//
// FrameReader takes the bytes a peer sends, in whatever pieces they
// arrive, and hands back whole frames. A header is checked before any of
// its payload is kept (length 1 to kMaxFrameBytes, shared-memory flags
// only where agreed and well formed), and the payload's memory grows with
// the bytes received, not
// with what the header announces: a peer that announces a large frame
// and sends nothing costs nothing. Thread: the one that owns it.
#pragma once

#include "pulse/protocol.h"

#include <array>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace audiod::pulse {

inline constexpr size_t kFrameHeaderBytes = 20;
inline constexpr uint32_t kSeekModeMask = 0x000000ffu;
inline constexpr uint32_t kShmFlagsMask = 0xff000000u;
// Within it: the payload names a block in a memory pool; the pool is a
// memfd; a block may be used again (sent back, with no payload).
inline constexpr uint32_t kShmData = 0x80000000u;
inline constexpr uint32_t kShmMemfdBlock = 0x20000000u;
inline constexpr uint32_t kShmRelease = 0x40000000u;
// A shared-memory frame's payload: four u32.
inline constexpr uint32_t kSharedBlockBytes = 16;

// Where an audio frame's bytes go, relative to its offset.
enum class SeekMode : uint8_t {
    relative = 0,
    absolute = 1,
    relative_on_read = 2,
    relative_end = 3
};

struct Frame {
    uint32_t channel = kControlChannel;
    int64_t offset = 0;
    uint32_t flags = 0;
    std::vector<uint8_t> payload;

    [[nodiscard]] bool is_packet() const noexcept { return channel == kControlChannel; }
    // The payload says where the audio is, not what it is.
    [[nodiscard]] bool shared() const noexcept { return (flags & kShmData) != 0; }
};

// Audio for a stream, from a frame or from the shared memory it names.
struct Audio {
    uint32_t channel = 0;
    int64_t offset = 0;
    uint32_t flags = 0; // the low byte: the seek mode
    std::span<const uint8_t> bytes;
};

// The header of a frame carrying `payload_bytes`.
[[nodiscard]] std::array<uint8_t, kFrameHeaderBytes>
frame_header(uint32_t payload_bytes, uint32_t channel = kControlChannel, int64_t offset = 0,
             uint32_t flags = 0);

// A command packet, framed.
[[nodiscard]] std::vector<uint8_t> frame_packet(std::span<const uint8_t> packet);

// The release of a block of the peer's shared memory: a header alone.
[[nodiscard]] std::array<uint8_t, kFrameHeaderBytes> frame_release(uint32_t block_id);

class FrameReader {
public:
    explicit FrameReader(uint32_t max_frame_bytes = kMaxFrameBytes)
        : max_frame_bytes_(max_frame_bytes) {}

    // From now on, audio frames may name blocks of shared memory.
    void allow_shared_memory() noexcept { shared_memory_ = true; }

    // Takes bytes as they arrived. False, with the reason in error(), if
    // they break the framing: the connection must end.
    bool feed(std::span<const uint8_t> bytes);
    // The next whole frame, if one is in.
    [[nodiscard]] std::optional<Frame> next();
    [[nodiscard]] const std::string& error() const noexcept { return error_; }
    // Bytes held for frames not yet whole.
    [[nodiscard]] size_t pending_bytes() const noexcept;

private:
    bool start_payload();

    uint32_t max_frame_bytes_;
    bool shared_memory_ = false;
    std::array<uint8_t, kFrameHeaderBytes> header_{};
    size_t header_fill_ = 0;
    bool in_payload_ = false;
    uint32_t payload_length_ = 0;
    Frame current_;
    std::vector<Frame> ready_;
    size_t next_ready_ = 0;
    std::string error_;
};

} // namespace audiod::pulse
