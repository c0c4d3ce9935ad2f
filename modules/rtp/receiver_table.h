// The receivers that report back to an RTP sink: their RFC 3550 receiver
// reports (loss, jitter) and, from audiod's rooms, how they play it (an
// APP packet: timed or not, how far off, realigns; rtcp.h PlayoutReport).
// A group lists its rooms from it, each by the name (CNAME) it reports.
//
// The reports are untrusted: a name is kept to 63 bytes of letters,
// digits and ._-/:@ (anything else becomes '_'), at most kMax receivers
// are kept (a receiver silent for kForgetNs makes room), and nothing
// grows. Written on the sink's rt thread; read by describe() on any.
#pragma once

#include "common/seq_locked.h"
#include "rtcp.h"

#include <array>
#include <cstddef>
#include <cstdint>

namespace audiod::rtp {

class ReceiverTable {
public:
    static constexpr size_t kMax = 16;
    // What each receiver's line holds, in order.
    static constexpr const char* kFields = "timed;clock-source;sync-error-us;realigns;"
                                           "link-offset-ms;delay-ms;lost-percent;jitter-ms;"
                                           "heard-s-ago";
    static constexpr int64_t kForgetNs = 10'000'000'000;

    // One compound RTCP packet that came back, at `now_ns` (monotonic).
    // Thread: rt (the sink's).
    void take_rt(const RtcpSummary& summary, int64_t now_ns, uint32_t rate) noexcept;

    // "receivers=A,B\nreceiver-fields=timed;...\nreceiver.A=yes;rtcp;...\n" for the
    // receivers heard from
    // within kForgetNs of `now_ns`. Returns the bytes written (at most
    // size - 1, NUL-terminated). Thread: any.
    size_t describe(char* text, size_t size, int64_t now_ns) const;

private:
    struct Receiver {
        char name[64];
        uint32_t ssrc;
        int64_t heard_ns; // 0: a free slot
        uint8_t fraction_lost;
        uint32_t cumulative_lost;
        double jitter_ms;
        bool has_playout;
        PlayoutReport playout;
    };
    std::array<Receiver, kMax> own_{}; // the rt thread's copy
    std::array<SeqLocked<Receiver>, kMax> published_;
};

} // namespace audiod::rtp
