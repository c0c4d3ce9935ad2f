// The options of an RTP source ([sources.NAME] type = "rtp"): where to
// listen, what the stream is (from an SDP file or stated), how much jitter
// to absorb and whom to accept. Thread: control.
#pragma once

#include "audiod/module.h"
#include "payload.h"

#include <cstdint>
#include <iterator>
#include <optional>
#include <string>
#include <vector>

namespace audiod::rtp {

// Which senders a source accepts: addresses with an optional prefix length.
struct AddressPrefix {
    uint8_t bytes[16]{};
    bool ipv6 = false;
    uint32_t bits = 0;
};

// What an RTP source accepts; RtpReceiveOptions holds them read (but
// `discover`, rtp_source.cpp's).
inline constexpr audiod_option_spec kSourceOptions[] = {
    {"address", "string", "0.0.0.0", "",
     "where to listen: a local address, or a multicast group to join; IPv4 or IPv6"},
    {"port", "integer", "46000", "1..65535", "the RTP port"},
    {"payload", "enum", "opus", "opus|l16|l24", "the stream's encoding"},
    {"payload-type", "integer", "96", "0..127", "the RTP payload type it takes"},
    {"clock-rate", "integer", "48000", "8000..192000", "the stream's rate (Opus: always 48000)"},
    {"stream-channels", "integer", "2", "1..8", "the stream's channels (Opus: 1 or 2)"},
    {"latency-ms", "integer", "40", "1..2000",
     "how far behind the sender it plays: the jitter buffer's target"},
    {"allow", "string", nullptr, "",
     "the senders it takes, addresses or address/prefix joined by commas (\"192.168.1.0/24, "
     "fd00::/8\"); default: any"},
    {"sdp-file", "string", nullptr, "",
     "an SDP file that describes the stream; the options beside it override what it says"},
    {"link-offset-ms", "integer", nullptr, "1..10000",
     "plays each frame this long after the sender's reports say it was due, in step with every "
     "receiver of the stream that has the same offset (rooms in sync); more than latency-ms. "
     "Default: untimed, latency-ms behind the audio's arrival"},
    {"media-clock", "enum", "reports", "reports|direct",
     "with link-offset-ms: when the sender's frames were due, by its RTCP sender reports, or "
     "read off the RTP times as the PTP clock's (CLOCK_TAI; RFC 7273 a=mediaclk:direct, AES67); "
     "default: direct where the sdp-file or SAP announcement says a=mediaclk:direct"},
    {"mediaclk-offset", "integer", nullptr, "0..4294967295",
     "with media-clock = direct: the RTP time at the PTP epoch; default: the SDP's, else 0"},
    {"delay-ms", "integer", "0", "0..9999",
     "with link-offset-ms: how late this room's sound comes out after its sink plays it (an HDMI "
     "or Bluetooth path); it is played that much earlier, in step with the other rooms. "
     "link-offset-ms less delay-ms must still be more than latency-ms"},
    {"member-name", "string", nullptr, "",
     "the name its reports give its sender (an RTCP CNAME), which a group lists this room by, "
     "one line of at most 63 bytes; default: HOST/NAME (this machine, this source)"},
    {"ptp4l", "string", nullptr, "",
     "with link-offset-ms: ptp4l's management socket (its uds_address, \"/var/run/ptp4l\"); "
     "this room plays on its clock less the offset that ptp4l measures of it (a ptp4l with "
     "free_running 1 that steers nothing), and reads AES67's RTP times on the grandmaster's "
     "timescale. Default: the clock as it is (CLOCK_TAI for AES67)"},
    {"reference-offset-us", "integer", "0", "-10000000..10000000",
     "for tests: how far ahead this receiver's wall clock is taken to read (a machine whose "
     "clock disagrees with the sender's)"},
    {"discover", "boolean", "false", "",
     "opens a source for each session that SAP announces instead, passing on latency-ms, allow, "
     "link-offset-ms and delay-ms (it then takes no other option)"},
};

struct RtpReceiveOptions {
    std::string address = "0.0.0.0"; // a local address, or a group to join
    uint16_t port = 46000;
    Encoding encoding = Encoding::opus;
    uint8_t payload_type = 96;
    uint32_t clock_rate = 48000; // the stream's rate (Opus: always 48000)
    uint32_t channels = 2;
    uint32_t latency_ms = 40;         // the jitter buffer's target
    std::vector<AddressPrefix> allow; // empty: everyone
    // Timed: each frame is heard link_offset_ms after its sender said it
    // was due (sender_clock.h); otherwise latency_ms after it arrives.
    bool timed = false;
    uint32_t link_offset_ms = 0;
    uint32_t delay_ms = 0; // this room's own lag after its sink: played that much earlier
    // The RTP times count the reference clock (media_clock.h): the
    // sender's reports are not needed, nor read.
    bool direct_clock = false;
    uint32_t mediaclk_offset = 0;
    std::string member_name; // in its reports to the sender
    std::string ptp4l;       // where ptp4l answers (ptp_follower.h); empty: none
    int64_t reference_offset_us = 0;
};

// Reads the options; `sdp-file` is read here, and options given beside it
// override what it says. On error returns nullopt with the option named.
[[nodiscard]] std::optional<RtpReceiveOptions>
parse_receive_options(const audiod_device_config& config, std::string& error);

// "192.168.1.0/24", "10.0.0.7", "fd00::/8".
[[nodiscard]] std::optional<AddressPrefix> parse_prefix(const std::string& text);
// Whether `address` (4 or 16 bytes; an IPv4-mapped IPv6 address counts as
// IPv4) lies in one of `allow` (empty: yes).
[[nodiscard]] bool allowed(const std::vector<AddressPrefix>& allow, const uint8_t* address,
                           bool ipv6) noexcept;

} // namespace audiod::rtp
