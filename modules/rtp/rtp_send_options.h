// The options of an RTP sink ([sinks.NAME] type = "rtp"), checked and with
// their defaults. Thread: control.
#pragma once

#include "audiod/module.h"
#include "payload.h"

#include <cstdint>
#include <iterator>
#include <optional>
#include <string>

namespace audiod::rtp {

// Defaults shared with PulseAudio's module-rtp-send and PipeWire's rtp-sink,
// so a receiver configured for either finds audiod without changes.
inline constexpr const char* kDefaultDestination = "224.0.0.56";
inline constexpr uint16_t kDefaultPort = 46000;
// Keeps a packet inside the smallest IPv6 MTU with room for tunnels.
inline constexpr uint32_t kDefaultMtu = 1280;

// What an RTP sink accepts; RtpSendOptions holds them read.
inline constexpr audiod_option_spec kSinkOptions[] = {
    {"destination", "string", kDefaultDestination, "",
     "where to send: a unicast address, a multicast group or a host name; IPv4 or IPv6"},
    {"port", "integer", "46000", "1..65534", "the RTP port; RTCP takes the next one"},
    {"payload", "enum", "opus", "opus|l16|l24", "the encoding"},
    {"payload-type", "integer", "96", "96..127", "the RTP payload type (a dynamic one)"},
    {"ptime", "number", nullptr, "",
     "milliseconds of audio a packet, above 0 and up to 100 (Opus: 2.5, 5, 10 or 20); default: "
     "10 for Opus, for L16 and L24 the longest of 20, 10, 5, 4, 2.5, 2 and 1 that fits mtu"},
    {"bitrate", "integer", nullptr, "6000..510000",
     "Opus's bits a second (\"96k\" is 96000); default: 64000 for one channel, else 128000"},
    {"fec", "boolean", "false", "", "Opus's in-band forward error correction"},
    {"expected-loss", "integer", "10", "0..100",
     "the packet loss, in percent, that Opus's FEC is tuned for"},
    {"resend", "boolean", "false", "", "sends each packet a second time, a ptime later"},
    {"ttl", "integer", "1", "0..255", "the multicast time to live, in hops"},
    {"mtu", "integer", "1280", "256..65507", "the largest packet, in bytes"},
    {"sdp-file", "string", nullptr, "",
     "where to write the session's SDP description, removed when the sink closes; default: "
     "nowhere"},
    {"announce", "boolean", "false", "", "announces the session by SAP"},
    {"sap-address", "string", nullptr, "",
     "where the announcements go (with announce = true); default: SAP's group for the "
     "destination's address family"},
    {"session-name", "string", nullptr, "",
     "the session's name in SDP and SAP, one line of at most 200 bytes; default: \"audiod NAME "
     "on HOST\""},
    {"aes67", "boolean", "false", "",
     "AES67: L24 (default) or L16 in 1 ms packets (default) whose RTP times count the PTP clock "
     "(CLOCK_TAI; RFC 7273 a=mediaclk:direct), said in the SDP with a=ts-refclk"},
    {"ptp-grandmaster", "string", "traceable", "",
     "with aes67: the PTP grandmaster's clock identity for a=ts-refclk, eight hex bytes "
     "joined by '-' (\"00-1D-C1-FF-FE-12-34-56\"), or traceable"},
    {"ptp-domain", "integer", "0", "0..127", "with aes67 and ptp-grandmaster: the PTP domain"},
    {"mediaclk-offset", "integer", "0", "0..4294967295",
     "with aes67: the RTP time at the PTP epoch (a=mediaclk:direct)"},
    {"suppress-silence", "boolean", "true", "",
     "sends nothing after a second of digital silence, until there is sound again"},
    {"ptp4l", "string", nullptr, "",
     "ptp4l's management socket (its uds_address, \"/var/run/ptp4l\"): the PTP time is this "
     "machine's clock less the offset that ptp4l measures of it, for a ptp4l that does not steer "
     "the clock (free_running 1); sender reports and AES67's RTP times are on that time. "
     "Default: the clock as it is (CLOCK_TAI for AES67)"},
};

struct RtpSendOptions {
    std::string destination = kDefaultDestination;
    uint16_t port = kDefaultPort; // RTP; RTCP goes to port + 1
    Encoding encoding = Encoding::opus;
    uint8_t payload_type = 96;
    uint32_t packet_frames = 0; // ptime in frames
    double ptime_ms = 0;
    uint32_t bitrate = 0; // Opus, bits per second
    bool fec = false;
    uint32_t expected_loss = 10; // percent, tunes Opus FEC
    // Each packet is sent again with the next one, a ptime later.
    bool resend = false;
    int ttl = 1;
    uint32_t mtu = kDefaultMtu;
    std::string sdp_file;
    bool announce = false;
    // Where announcements go; empty: SAP's group for the session's family.
    std::string sap_address;
    std::string session_name;
    bool suppress_silence = true;
    // AES67: RTP times count the reference clock (media_clock.h), and the
    // SDP says which clock (a=ts-refclk) and how (a=mediaclk:direct).
    bool aes67 = false;
    std::string ptp_grandmaster = "traceable";
    uint32_t ptp_domain = 0;
    uint32_t mediaclk_offset = 0;
    // Where ptp4l answers (ptp_follower.h); empty: the clocks as they are.
    std::string ptp4l;
    // The RTP clock the stream claims: the sink's rate, or for Opus 48000.
    // A sink whose rate differs sends a clock that is off by the
    // difference (at most 1 %): a sender that runs fast or slow, for
    // testing receivers.
    uint32_t clock_rate = 0;
};

// Reads and checks the options for a sink of `config`'s rate and channels.
// On error returns nullopt with a message naming the option.
[[nodiscard]] std::optional<RtpSendOptions> parse_send_options(const audiod_device_config& config,
                                                               std::string& error);

} // namespace audiod::rtp
