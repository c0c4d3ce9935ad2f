// Frames: how the PulseAudio native protocol cuts its byte stream. Every
// frame is a 20-byte header of five big-endian u32 — payload length,
// channel, the offset's high and low halves, flags — then the payload:
// a command packet (channel kControlChannel, flags 0) or audio for the
// stream of that channel (offset and the low flag byte: where it goes,
// the seek mode). The high flag byte marks shared memory, which audiod's
// server does not negotiate, so a frame that claims it is refused.
//
// FrameReader takes the bytes a peer sends, in whatever pieces they
// arrive, and hands back whole frames. A header is checked before any of
// its payload is kept (length 1 to kMaxFrameBytes, no shared-memory
// flags), and the payload's memory grows with the bytes received, not
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
};

// The header of a frame carrying `payload_bytes`.
[[nodiscard]] std::array<uint8_t, kFrameHeaderBytes>
frame_header(uint32_t payload_bytes, uint32_t channel = kControlChannel, int64_t offset = 0,
             uint32_t flags = 0);

// A command packet, framed.
[[nodiscard]] std::vector<uint8_t> frame_packet(std::span<const uint8_t> packet);

class FrameReader {
public:
    explicit FrameReader(uint32_t max_frame_bytes = kMaxFrameBytes)
        : max_frame_bytes_(max_frame_bytes) {}

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
