// The two questions audiod asks ptp4l (linuxptp) on its management socket,
// and the answers: IEEE 1588 management messages (§15) carried over a
// Unix datagram socket, as `pmc` sends them.
//
//   TIME_STATUS_NP (linuxptp's own, 0xC000): how far this machine's clock
//   is from the grandmaster's (master_offset, ns) and whether there is a
//   grandmaster at all;
//   TIME_PROPERTIES_DATA_SET (0x2003): the grandmaster's timescale (PTP,
//   which counts TAI, or arbitrary) and the UTC offset it announces.
//
// ptp4l's master_offset is already on the local clock's timescale (it
// takes the UTC offset off a PTP-timescale grandmaster's time when the
// clock is CLOCK_REALTIME), so the grandmaster's time is the local clock
// less master_offset, plus the UTC offset when it counts PTP time.
// Thread: any (pure functions). The answer is untrusted input: parse
// refuses anything short, of another kind or inconsistent (fuzzed).
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>

namespace audiod::rtp {

constexpr uint16_t kPtpTimeStatusNp = 0xC000;
constexpr uint16_t kPtpTimePropertiesDataSet = 0x2003;
constexpr size_t kPtpManagementRequestSize = 54;

// A GET of `id` from any clock (target all ones), numbered `sequence`,
// from a port named by `sender` (pmc uses its pid). Writes
// kPtpManagementRequestSize bytes.
void write_ptp_get(uint16_t id, uint16_t sequence, uint32_t sender, uint8_t domain,
                   uint8_t* out) noexcept;

struct PtpAnswer {
    uint16_t id = 0; // which of the two it answers
    uint16_t sequence = 0;
    // TIME_STATUS_NP
    int64_t master_offset_ns = 0;
    bool grandmaster_present = false;
    uint64_t grandmaster = 0; // its clock identity, eight bytes as one number
    // TIME_PROPERTIES_DATA_SET
    int16_t utc_offset_s = 0;
    bool utc_offset_valid = false;
    bool ptp_timescale = false;
};

// A RESPONSE to one of the two GETs, or false (an error status, another
// message, a truncated or inconsistent one).
[[nodiscard]] bool parse_ptp_answer(std::span<const uint8_t> message, PtpAnswer& answer) noexcept;

} // namespace audiod::rtp
