// A direct media clock (RFC 7273 §5.2, a=mediaclk:direct=OFFSET; AES67):
// the RTP time of a sample is the reference clock's time at that sample,
// counted in the stream's rate, plus an offset, modulo 2^32. Every
// receiver that reads the same reference (PTP) knows when each packet's
// samples were taken without a sender report; audiod takes the reference
// from CLOCK_TAI, which ptp4l and phc2sys keep on PTP time (TAI, as PTP
// counts it; with the kernel's TAI offset unset it reads as the wall clock,
// the same on every machine so set).
// Thread: any (pure functions).
#pragma once

#include <cstdint>

namespace audiod::rtp {

// The RTP time of reference time `reference_ns` (ns since the epoch),
// rounded to the nearest sample.
[[nodiscard]] uint32_t media_clock_at(int64_t reference_ns, uint32_t rate,
                                      uint32_t offset) noexcept;

// The reference time (ns) of RTP time `rtp`: of all the times that RTP
// time stands for (one every 2^32 samples, a day at 48 kHz), the one
// nearest `near_ns`.
[[nodiscard]] int64_t media_clock_time(uint32_t rtp, uint32_t rate, uint32_t offset,
                                       int64_t near_ns) noexcept;

} // namespace audiod::rtp
