// "numbered": a stereo signal whose every frame says which stream it is
// and which frame of that stream, with a check, so that a recording of
// sinks that streams move between says exactly what of each arrived (the
// soak, bench/soak). 16-bit samples pass the mix bit-exact at unity gain;
// a frame at another gain (a volume ramp) fails its check or reads as
// some other number, so a reader trusts a new run of numbers only after
// several frames in a row agree.
//
//   left   the frame number's low 16 bits
//   right  bits 9-14 the stream (1..63), bits 5-8 a check of stream and
//          number, bits 0-4 the number's next 5 bits: positive and never
//          0, so silence is told from any frame
//
// Numbers wrap every 2^21 frames (43.7 s at 48 kHz): a reader unwraps
// them against the last it saw of the stream, which must not go unheard
// for half of that.
#pragma once

#include <cstdint>
#include <optional>

namespace audiod::test {

inline constexpr uint32_t kMaxNumberedStream = 63;
inline constexpr uint64_t kNumberedWrap = uint64_t{1} << 21;

inline uint32_t numbered_check(uint32_t stream, uint64_t wrapped) {
    uint64_t h = (wrapped << 6 | stream) * 0x9E3779B97F4A7C15ull;
    return static_cast<uint32_t>(h >> 60);
}

inline void numbered_frame(uint32_t stream, uint64_t frame, int16_t& left, int16_t& right) {
    const uint64_t wrapped = frame % kNumberedWrap;
    left = static_cast<int16_t>(static_cast<uint16_t>(wrapped & 0xffff));
    right = static_cast<int16_t>((stream & 0x3f) << 9 |
                                 numbered_check(stream & 0x3f, wrapped) << 5 | (wrapped >> 16));
}

struct NumberedFrame {
    uint32_t stream = 0;
    uint64_t wrapped = 0; // the frame number modulo kNumberedWrap
};

// The frame's stream and number; nullopt for silence or a frame whose
// check fails.
inline std::optional<NumberedFrame> read_numbered(int16_t left, int16_t right) {
    if (right <= 0 || (right >> 9) == 0) {
        return std::nullopt;
    }
    const NumberedFrame frame{static_cast<uint32_t>(right >> 9),
                              (static_cast<uint64_t>(right & 0x1f) << 16) |
                                  static_cast<uint16_t>(left)};
    if (numbered_check(frame.stream, frame.wrapped) !=
        ((static_cast<uint32_t>(right) >> 5) & 0xf)) {
        return std::nullopt;
    }
    return frame;
}

// The full number that `wrapped` stands for, nearest to `near`.
inline uint64_t unwrap_numbered(uint64_t wrapped, uint64_t near) {
    const uint64_t base = near - near % kNumberedWrap;
    uint64_t best = base + wrapped;
    if (best > near && best - near > kNumberedWrap / 2 && best >= kNumberedWrap) {
        best -= kNumberedWrap;
    } else if (best < near && near - best > kNumberedWrap / 2) {
        best += kNumberedWrap;
    }
    return best;
}

} // namespace audiod::test
