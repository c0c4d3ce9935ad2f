// The RTP sink's and source's option tables tell the truth about their
// defaults: every default a table states, written out, reads as the
// parser's own default does.
#include "rtp_receive_options.h"
#include "rtp_send_options.h"

#include <boost/test/unit_test.hpp>

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
    BOOST_CHECK_EQUAL(written.size(), 11u); // the others depend on the sink
    const auto stated = parse_send_options(config_of(written), error);
    BOOST_REQUIRE_MESSAGE(stated, error);
    BOOST_CHECK_EQUAL(stated->destination, implied->destination);
    BOOST_CHECK_EQUAL(stated->port, implied->port);
    BOOST_CHECK(stated->encoding == implied->encoding);
    BOOST_CHECK_EQUAL(stated->payload_type, implied->payload_type);
    BOOST_CHECK_EQUAL(stated->fec, implied->fec);
    BOOST_CHECK_EQUAL(stated->expected_loss, implied->expected_loss);
    BOOST_CHECK_EQUAL(stated->resend, implied->resend);
    BOOST_CHECK_EQUAL(stated->ttl, implied->ttl);
    BOOST_CHECK_EQUAL(stated->mtu, implied->mtu);
    BOOST_CHECK_EQUAL(stated->announce, implied->announce);
    BOOST_CHECK_EQUAL(stated->suppress_silence, implied->suppress_silence);
}

BOOST_AUTO_TEST_CASE(the_sources_stated_defaults_are_its_defaults) {
    std::string error;
    const auto implied = parse_receive_options(config_of({}), error);
    BOOST_REQUIRE_MESSAGE(implied, error);
    std::vector<audiod_option> written = stated_defaults(kSourceOptions);
    // `discover` is the source's own (rtp_source.cpp), not the parser's.
    std::erase_if(written, [](const audiod_option& o) { return std::string(o.key) == "discover"; });
    BOOST_CHECK_EQUAL(written.size(), 7u);
    const auto stated = parse_receive_options(config_of(written), error);
    BOOST_REQUIRE_MESSAGE(stated, error);
    BOOST_CHECK_EQUAL(stated->address, implied->address);
    BOOST_CHECK_EQUAL(stated->port, implied->port);
    BOOST_CHECK(stated->encoding == implied->encoding);
    BOOST_CHECK_EQUAL(stated->payload_type, implied->payload_type);
    BOOST_CHECK_EQUAL(stated->clock_rate, implied->clock_rate);
    BOOST_CHECK_EQUAL(stated->channels, implied->channels);
    BOOST_CHECK_EQUAL(stated->latency_ms, implied->latency_ms);
}

BOOST_AUTO_TEST_SUITE_END()
