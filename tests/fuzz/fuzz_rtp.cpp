// Fuzz target: RTP and RTCP packets as they arrive from the network, and
// ptp4l's management answers. The parsers must accept or refuse, never
// read past the datagram; an accepted packet's payload must lie inside it.
#include "ptp_management.h"
#include "rtcp.h"
#include "rtp_packet.h"

#include <cstdint>
#include <span>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    const std::span<const uint8_t> datagram(data, size);
    audiod::rtp::RtpPacket packet;
    if (audiod::rtp::parse_packet(datagram, packet) == audiod::rtp::PacketError::none) {
        if (packet.payload.empty() || packet.payload.data() < data ||
            packet.payload.data() + packet.payload.size() > data + size) {
            __builtin_trap();
        }
        volatile uint8_t sink = packet.payload.back();
        (void)sink;
    }
    audiod::rtp::RtcpSummary summary;
    (void)audiod::rtp::parse_rtcp(datagram, summary);
    audiod::rtp::PtpAnswer answer;
    (void)audiod::rtp::parse_ptp_answer(datagram, answer);
    return 0;
}
