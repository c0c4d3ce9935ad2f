// Session descriptions: what audiod writes says what RFC 4566 and RFC 7587
// require (and what PulseAudio, PipeWire, ffmpeg and GStreamer read), and
// what other senders write is read or refused with a reason.
#include "sdp.h"

#include <boost/test/unit_test.hpp>

using namespace audiod::rtp;

namespace {

SdpDescription opus_session() {
    SdpDescription d;
    d.session_name = "audiod kitchen on box";
    d.origin_address = "192.0.2.7";
    d.session_id = 123;
    d.session_version = 456;
    d.address = "239.1.2.3";
    d.ttl = 4;
    d.port = 46000;
    d.payload_type = 96;
    d.encoding = Encoding::opus;
    d.rate = 48000;
    d.channels = 1;
    d.ptime_ms = 2.5;
    d.fec = true;
    return d;
}

} // namespace

BOOST_AUTO_TEST_SUITE(sdp)

BOOST_AUTO_TEST_CASE(opus_is_always_48000_2_with_sprop_stereo_for_the_truth) {
    const std::string text = write_sdp(opus_session());
    BOOST_TEST_MESSAGE(text);
    BOOST_CHECK_EQUAL(text, "v=0\n"
                            "o=- 123 456 IN IP4 192.0.2.7\n"
                            "s=audiod kitchen on box\n"
                            "c=IN IP4 239.1.2.3/4\n"
                            "t=0 0\n"
                            "a=recvonly\n"
                            "m=audio 46000 RTP/AVP 96\n"
                            "a=rtpmap:96 OPUS/48000/2\n"
                            "a=fmtp:96 stereo=0; sprop-stereo=0; useinbandfec=1\n"
                            "a=ptime:2.5\n");
    std::string error;
    const auto back = parse_sdp(text, error);
    BOOST_REQUIRE_MESSAGE(back, error);
    BOOST_CHECK_EQUAL(back->channels, 1u);
    BOOST_CHECK(back->fec);
    BOOST_CHECK_EQUAL(back->ptime_ms, 2.5);
    BOOST_CHECK_EQUAL(back->address, "239.1.2.3");
    BOOST_CHECK_EQUAL(back->session_name, "audiod kitchen on box");
}

BOOST_AUTO_TEST_CASE(linear_pcm_unicast_and_ipv6) {
    SdpDescription d = opus_session();
    d.encoding = Encoding::l24;
    d.channels = 2;
    d.address = "192.0.2.9"; // unicast: no TTL
    d.fec = false;
    std::string text = write_sdp(d);
    BOOST_CHECK(text.find("c=IN IP4 192.0.2.9\n") != std::string::npos);
    BOOST_CHECK(text.find("a=rtpmap:96 L24/48000/2\n") != std::string::npos);
    BOOST_CHECK(text.find("fmtp") == std::string::npos);
    d.ipv6 = true;
    d.address = "ff02::1234";
    d.origin_address = "fd00::2";
    text = write_sdp(d);
    BOOST_CHECK(text.find("o=- 123 456 IN IP6 fd00::2\n") != std::string::npos);
    BOOST_CHECK(text.find("c=IN IP6 ff02::1234\n") != std::string::npos);
    std::string error;
    const auto back = parse_sdp(text, error);
    BOOST_REQUIRE_MESSAGE(back, error);
    BOOST_CHECK(back->ipv6);
    BOOST_CHECK(back->encoding == Encoding::l24);
}

BOOST_AUTO_TEST_CASE(pulseaudio_and_lower_case_senders_are_understood) {
    // As PulseAudio 16's module-rtp-send writes it (static payload type 10).
    const std::string pulse = "v=0\r\no=pulse 3912345 0 IN IP4 10.0.0.5\r\n"
                              "s=PulseAudio RTP Stream on box\r\nc=IN IP4 224.0.0.56\r\n"
                              "t=3912345 0\r\na=recvonly\r\nm=audio 46044 RTP/AVP 10\r\n"
                              "a=rtpmap:10 L16/44100/2\r\na=type:broadcast\r\n";
    std::string error;
    auto d = parse_sdp(pulse, error);
    BOOST_REQUIRE_MESSAGE(d, error);
    BOOST_CHECK(d->encoding == Encoding::l16);
    BOOST_CHECK_EQUAL(d->rate, 44100u);
    BOOST_CHECK_EQUAL(d->channels, 2u);
    BOOST_CHECK_EQUAL(d->port, 46044);
    BOOST_CHECK_EQUAL(d->address, "224.0.0.56");
    BOOST_CHECK_EQUAL(d->session_name, "PulseAudio RTP Stream on box");
    // RFC 7587's own example spelling, with a video section after it.
    const std::string lower = "v=0\no=- 1 1 IN IP4 10.0.0.1\ns=x\nc=IN IP4 10.0.0.9\nt=0 0\n"
                              "m=audio 5004 RTP/AVP 101\na=rtpmap:101 opus/48000/2\n"
                              "a=fmtp:101 sprop-stereo=1\nm=video 5006 RTP/AVP 96\n"
                              "a=rtpmap:96 H264/90000\n";
    d = parse_sdp(lower, error);
    BOOST_REQUIRE_MESSAGE(d, error);
    BOOST_CHECK(d->encoding == Encoding::opus);
    BOOST_CHECK_EQUAL(d->payload_type, 101);
    BOOST_CHECK_EQUAL(d->channels, 2u);
}

// RFC 7273 as AES67 uses it: the reference clock and a direct media clock,
// written at media level and read from either level.
BOOST_AUTO_TEST_CASE(an_aes67_session_says_its_ptp_clock_and_direct_media_clock) {
    SdpDescription d = opus_session();
    d.encoding = Encoding::l24;
    d.channels = 2;
    d.ptime_ms = 1;
    d.fec = false;
    d.ts_refclk = "ptp=IEEE1588-2008:00-1D-C1-FF-FE-12-34-56:0";
    d.mediaclk_direct = 4000000000u;
    const std::string text = write_sdp(d);
    BOOST_CHECK_NE(text.find("a=ts-refclk:ptp=IEEE1588-2008:00-1D-C1-FF-FE-12-34-56:0\n"),
                   std::string::npos);
    BOOST_CHECK_NE(text.find("a=mediaclk:direct=4000000000\n"), std::string::npos);
    BOOST_CHECK_NE(text.find("a=ptime:1\n"), std::string::npos);
    std::string error;
    const auto back = parse_sdp(text, error);
    BOOST_REQUIRE_MESSAGE(back, error);
    BOOST_CHECK_EQUAL(back->ts_refclk, d.ts_refclk);
    BOOST_CHECK(back->mediaclk_direct == d.mediaclk_direct);

    // A Dante-style description: session-level clock, a rate after the offset.
    const auto other = parse_sdp("v=0\r\no=- 1 1 IN IP4 10.0.0.2\r\ns=stage\r\n"
                                 "c=IN IP4 239.69.0.1/32\r\nt=0 0\r\n"
                                 "a=ts-refclk:ptp=IEEE1588-2008:traceable\r\n"
                                 "a=mediaclk:direct=963214424 rate=48000\r\n"
                                 "m=audio 5004 RTP/AVP 97\r\na=rtpmap:97 L24/48000/8\r\n",
                                 error);
    BOOST_REQUIRE_MESSAGE(other, error);
    BOOST_CHECK_EQUAL(other->ts_refclk, "ptp=IEEE1588-2008:traceable");
    BOOST_CHECK(other->mediaclk_direct == 963214424u);
    // Another media clock (a sender's own): timed by its reports.
    const auto own = parse_sdp("v=0\r\no=- 1 1 IN IP4 10.0.0.2\r\ns=x\r\nc=IN IP4 10.0.0.9\r\n"
                               "t=0 0\r\nm=audio 5004 RTP/AVP 97\r\na=rtpmap:97 L24/48000/2\r\n"
                               "a=mediaclk:sender\r\n",
                               error);
    BOOST_REQUIRE_MESSAGE(own, error);
    BOOST_CHECK(!own->mediaclk_direct);
    BOOST_CHECK(!parse_sdp("v=0\r\ns=x\r\nc=IN IP4 10.0.0.9\r\nm=audio 5004 RTP/AVP 97\r\n"
                           "a=rtpmap:97 L24/48000/2\r\na=mediaclk:direct=99999999999\r\n",
                           error));
    BOOST_CHECK_NE(error.find("mediaclk"), std::string::npos);
}

BOOST_AUTO_TEST_CASE(what_cannot_be_played_is_refused_with_a_reason) {
    const std::string head = "v=0\no=- 1 1 IN IP4 10.0.0.1\ns=x\nc=IN IP4 10.0.0.9\nt=0 0\n";
    const std::pair<std::string, std::string> cases[] = {
        {"", "v=0"},
        {"o=- 1 1 IN IP4 1.2.3.4\n", "v=0"},
        {head, "no RTP audio stream"},
        {head + "m=audio 5004 RTP/AVP 96\n", "no a=rtpmap"},
        {head + "m=audio 5004 RTP/AVP 96\na=rtpmap:96 PCMU/8000\n", "unsupported encoding"},
        {head + "m=audio 5004 RTP/AVP 96\na=rtpmap:96 OPUS/44100/2\n", "48000"},
        {head + "m=audio 5004 RTP/AVP 96\na=rtpmap:96 L16/48000/99\n", "channel"},
        {head + "m=audio 0 RTP/AVP 96\n", "m=audio"},
        {head + "m=audio 5004 RTP/AVP 300\n", "m=audio"},
        {head + "m=audio 5004 RTP/AVP 96\na=rtpmap:96 L16\n", "clock rate"},
        {"v=0\nm=audio 5004 RTP/AVP 96\na=rtpmap:96 L16/48000/2\n", "connection address"},
        {head + "garbage\n", "TYPE=VALUE"},
        {"v=0\n" + std::string(kMaxSdpSize, 'a'), "larger than"},
    };
    for (const auto& [text, reason] : cases) {
        std::string error;
        BOOST_CHECK_MESSAGE(!parse_sdp(text, error), text);
        BOOST_CHECK_MESSAGE(error.find(reason) != std::string::npos,
                            "'" << error << "' should mention '" << reason << "'");
    }
}

BOOST_AUTO_TEST_SUITE_END()
