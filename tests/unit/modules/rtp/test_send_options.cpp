// An RTP sink's options: defaults that PulseAudio's and PipeWire's receivers
// find, packets that fit the MTU, and a message naming any bad option.
#include "rtp_send_options.h"

#include <boost/test/unit_test.hpp>

#include <map>
#include <vector>

using namespace audiod::rtp;

namespace {

std::optional<RtpSendOptions> parse(const std::map<std::string, std::string>& options,
                                    std::string& error, uint32_t rate = 48000,
                                    uint32_t channels = 2) {
    std::vector<audiod_option> list;
    for (const auto& [k, v] : options) {
        list.push_back({k.c_str(), v.c_str()});
    }
    const audiod_device_config config{"net", rate, channels, 256, list.data(), list.size()};
    return parse_send_options(config, error);
}

} // namespace

BOOST_AUTO_TEST_SUITE(send_options)

BOOST_AUTO_TEST_CASE(defaults) {
    std::string error;
    const auto o = parse({}, error);
    BOOST_REQUIRE_MESSAGE(o, error);
    BOOST_CHECK_EQUAL(o->destination, "224.0.0.56");
    BOOST_CHECK_EQUAL(o->port, 46000);
    BOOST_CHECK(o->encoding == Encoding::opus);
    BOOST_CHECK_EQUAL(o->payload_type, 96);
    BOOST_CHECK_EQUAL(o->ptime_ms, 10.0);
    BOOST_CHECK_EQUAL(o->packet_frames, 480u);
    BOOST_CHECK_EQUAL(o->bitrate, 128000u);
    BOOST_CHECK(!o->fec);
    BOOST_CHECK(!o->resend);
    BOOST_CHECK_EQUAL(o->ttl, 1);
    BOOST_CHECK(!o->announce);
    BOOST_CHECK(o->sap_address.empty()); // SAP's own group for the session's family
    BOOST_CHECK(o->session_name.find("net") != std::string::npos);
}

BOOST_AUTO_TEST_CASE(linear_pcm_packets_fit_the_mtu) {
    std::string error;
    // 48 kHz stereo L16: 5 ms is 960 bytes, 10 ms would be 1920.
    auto o = parse({{"payload", "l16"}}, error);
    BOOST_REQUIRE_MESSAGE(o, error);
    BOOST_CHECK_EQUAL(o->ptime_ms, 5.0);
    BOOST_CHECK_EQUAL(o->packet_frames, 240u);
    // L24 stereo: 4 ms = 1152 bytes.
    o = parse({{"payload", "l24"}}, error);
    BOOST_REQUIRE(o);
    BOOST_CHECK_EQUAL(o->ptime_ms, 4.0);
    // 44.1 kHz: 5 ms rounds down to 220 frames.
    o = parse({{"payload", "l16"}}, error, 44100);
    BOOST_REQUIRE(o);
    BOOST_CHECK_EQUAL(o->packet_frames, 220u);
    // A bigger MTU, a chosen ptime.
    o = parse({{"payload", "l16"}, {"mtu", "9000"}, {"ptime", "20"}}, error);
    BOOST_REQUIRE_MESSAGE(o, error);
    BOOST_CHECK_EQUAL(o->packet_frames, 960u);
    BOOST_CHECK(!parse({{"payload", "l16"}, {"ptime", "10"}}, error));
    BOOST_CHECK_MESSAGE(error.find("mtu") != std::string::npos, error);
}

BOOST_AUTO_TEST_CASE(opus_ptimes_rates_and_channels) {
    std::string error;
    for (const auto& [ptime, frames] :
         std::vector<std::pair<std::string, uint32_t>>{{"2.5", 120}, {"5", 240}, {"20", 960}}) {
        const auto o = parse({{"ptime", ptime}}, error);
        BOOST_REQUIRE_MESSAGE(o, error);
        BOOST_CHECK_EQUAL(o->packet_frames, frames);
    }
    BOOST_CHECK(!parse({{"ptime", "3"}}, error));
    BOOST_CHECK_MESSAGE(error.find("2.5, 5, 10 or 20") != std::string::npos, error);
    BOOST_CHECK(!parse({}, error, 44100));
    BOOST_CHECK_MESSAGE(error.find("48000") != std::string::npos, error);
    BOOST_CHECK(!parse({}, error, 48000, 6));
    const auto mono =
        parse({{"bitrate", "32k"}, {"fec", "true"}, {"expected-loss", "20"}}, error, 48000, 1);
    BOOST_REQUIRE_MESSAGE(mono, error);
    BOOST_CHECK_EQUAL(mono->bitrate, 32000u);
    BOOST_CHECK(mono->fec);
    BOOST_CHECK_EQUAL(mono->expected_loss, 20u);
}

BOOST_AUTO_TEST_CASE(announcements_may_go_to_a_chosen_group) {
    std::string error;
    const auto o = parse({{"announce", "true"}, {"sap-address", "239.255.1.2"}}, error);
    BOOST_REQUIRE_MESSAGE(o, error);
    BOOST_CHECK(o->announce);
    BOOST_CHECK_EQUAL(o->sap_address, "239.255.1.2");
}

BOOST_AUTO_TEST_CASE(bad_options_are_named) {
    const std::pair<std::map<std::string, std::string>, std::string> cases[] = {
        {{{"volume", "1"}}, "no option 'volume'"},
        {{{"port", "0"}}, "port"},
        {{{"port", "70000"}}, "port"},
        {{{"port", "12ab"}}, "port"},
        {{{"payload", "mp3"}}, "payload"},
        {{{"payload-type", "10"}}, "payload-type"},
        {{{"bitrate", "1"}}, "bitrate"},
        {{{"fec", "maybe"}}, "fec"},
        {{{"fec", "true"}, {"payload", "l16"}}, "fec"},
        {{{"expected-loss", "101"}}, "expected-loss"},
        {{{"resend", "twice"}}, "resend"},
        {{{"ttl", "256"}}, "ttl"},
        {{{"mtu", "100"}}, "mtu"},
        {{{"announce", "sometimes"}}, "announce"},
        {{{"sap-address", "239.1.2.3"}}, "announce is not true"},
        {{{"announce", "true"}, {"sap-address", ""}}, "sap-address"},
        {{{"ptime", "-1"}}, "ptime"},
        {{{"session-name", "two\nlines"}}, "session-name"},
    };
    for (const auto& [options, needle] : cases) {
        std::string error;
        BOOST_CHECK(!parse(options, error));
        BOOST_CHECK_MESSAGE(error.find(needle) != std::string::npos,
                            "'" << error << "' should name '" << needle << "'");
    }
}

// AES67: L24 in 1 ms packets by default, L16 if asked, Opus refused; the
// PTP settings only with it.
BOOST_AUTO_TEST_CASE(aes67_is_l24_in_1_ms_packets_on_the_ptp_clock) {
    std::string error;
    const auto o = parse({{"aes67", "true"}}, error);
    BOOST_REQUIRE_MESSAGE(o, error);
    BOOST_CHECK(o->aes67);
    BOOST_CHECK(o->encoding == Encoding::l24);
    BOOST_CHECK_EQUAL(o->ptime_ms, 1.0);
    BOOST_CHECK_EQUAL(o->packet_frames, 48u);
    BOOST_CHECK_EQUAL(o->ptp_grandmaster, "traceable");
    const auto l16 = parse({{"aes67", "yes"},
                            {"payload", "l16"},
                            {"ptime", "4"},
                            {"ptp-grandmaster", "00-1d-c1-ff-fe-12-34-56"},
                            {"ptp-domain", "3"},
                            {"mediaclk-offset", "4294967295"}},
                           error);
    BOOST_REQUIRE_MESSAGE(l16, error);
    BOOST_CHECK(l16->encoding == Encoding::l16);
    BOOST_CHECK_EQUAL(l16->packet_frames, 192u);
    BOOST_CHECK_EQUAL(l16->ptp_domain, 3u);
    BOOST_CHECK_EQUAL(l16->mediaclk_offset, 4294967295u);

    BOOST_CHECK(!parse({{"aes67", "true"}, {"payload", "opus"}}, error));
    BOOST_CHECK_NE(error.find("not Opus"), std::string::npos);
    BOOST_CHECK(!parse({{"ptp-domain", "3"}}, error));
    BOOST_CHECK_NE(error.find("aes67 is not true"), std::string::npos);
    BOOST_CHECK(!parse({{"aes67", "true"}, {"ptp-grandmaster", "00-1D-C1-FF-FE-12-34"}}, error));
    BOOST_CHECK_NE(error.find("clock identity"), std::string::npos);
    BOOST_CHECK(!parse({{"aes67", "true"}, {"ptp-domain", "128"}}, error));
}

BOOST_AUTO_TEST_SUITE_END()
