// The RTP sink's and source's option tables tell the truth about their
// defaults: every default a table states, written out, reads as the
// parser's own default does.
#include "rtp_receive_options.h"
#include "rtp_send_options.h"

#include <boost/test/unit_test.hpp>

#include <tuple>
#include <vector>

using namespace audiod::rtp;

namespace {

// The table's stated defaults, as a configuration would write them.
std::vector<audiod_option> stated_defaults(std::span<const audiod_option_spec> specs) {
    std::vector<audiod_option> options;
    for (const audiod_option_spec& spec : specs) {
        if (spec.default_value != nullptr) {
            options.push_back({spec.key, spec.default_value});
        }
    }
    return options;
}

audiod_device_config config_of(const std::vector<audiod_option>& options) {
    return {"net", 48000, 2, 256, options.data(), options.size()};
}

} // namespace

BOOST_AUTO_TEST_SUITE(option_specs)

BOOST_AUTO_TEST_CASE(the_sinks_stated_defaults_are_its_defaults) {
    std::string error;
    const auto implied = parse_send_options(config_of({}), error);
    BOOST_REQUIRE_MESSAGE(implied, error);
    const std::vector<audiod_option> written = stated_defaults(kSinkOptions);
    BOOST_CHECK_EQUAL(written.size(), 15u); // the others depend on the sink
    const auto stated = parse_send_options(config_of(written), error);
    BOOST_REQUIRE_MESSAGE(stated, error);
    // What the stated options set; the rest follows from the sink.
    const auto set = [](const RtpSendOptions& o) {
        return std::tie(o.destination, o.port, o.encoding, o.payload_type, o.fec, o.expected_loss,
                        o.resend, o.ttl, o.mtu, o.announce, o.suppress_silence, o.aes67,
                        o.ptp_grandmaster, o.ptp_domain, o.mediaclk_offset);
    };
    BOOST_CHECK(set(*stated) == set(*implied));
}

BOOST_AUTO_TEST_CASE(the_sources_stated_defaults_are_its_defaults) {
    std::string error;
    const auto implied = parse_receive_options(config_of({}), error);
    BOOST_REQUIRE_MESSAGE(implied, error);
    std::vector<audiod_option> written = stated_defaults(kSourceOptions);
    // `discover` is the source's own (rtp_source.cpp), not the parser's.
    std::erase_if(written, [](const audiod_option& o) { return std::string(o.key) == "discover"; });
    BOOST_CHECK_EQUAL(written.size(), 10u);
    const auto stated = parse_receive_options(config_of(written), error);
    BOOST_REQUIRE_MESSAGE(stated, error);
    const auto set = [](const RtpReceiveOptions& o) {
        return std::tie(o.address, o.port, o.encoding, o.payload_type, o.clock_rate, o.channels,
                        o.latency_ms, o.timed, o.reference_offset_us, o.direct_clock,
                        o.mediaclk_offset, o.delay_ms);
    };
    BOOST_CHECK(set(*stated) == set(*implied));
}

BOOST_AUTO_TEST_SUITE_END()
