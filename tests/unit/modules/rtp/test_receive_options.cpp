// An RTP source's timing options: a link offset that leaves the jitter
// buffer time to fill, and a room's delay trim that takes from it.
#include "rtp_receive_options.h"

#include <boost/test/unit_test.hpp>

#include <map>
#include <vector>

using namespace audiod::rtp;

namespace {

std::optional<RtpReceiveOptions> parse(const std::map<std::string, std::string>& options,
                                       std::string& error) {
    std::vector<audiod_option> list;
    for (const auto& [k, v] : options) {
        list.push_back({k.c_str(), v.c_str()});
    }
    const audiod_device_config config{"rx", 48000, 2, 256, list.data(), list.size()};
    return parse_receive_options(config, error);
}

} // namespace

BOOST_AUTO_TEST_SUITE(receive_options)

BOOST_AUTO_TEST_CASE(untimed_unless_a_link_offset_is_given) {
    std::string error;
    const auto o = parse({}, error);
    BOOST_REQUIRE_MESSAGE(o, error);
    BOOST_CHECK(!o->timed);
    BOOST_CHECK_EQUAL(o->delay_ms, 0u);
    const auto timed = parse({{"link-offset-ms", "150"}, {"delay-ms", "40"}}, error);
    BOOST_REQUIRE_MESSAGE(timed, error);
    BOOST_CHECK(timed->timed);
    BOOST_CHECK_EQUAL(timed->link_offset_ms, 150u);
    BOOST_CHECK_EQUAL(timed->delay_ms, 40u);
}

BOOST_AUTO_TEST_CASE(a_trim_or_offset_that_leaves_the_jitter_buffer_no_time_is_refused) {
    std::string error;
    BOOST_CHECK(!parse({{"link-offset-ms", "40"}}, error)); // latency-ms is 40
    BOOST_CHECK_NE(error.find("link-offset-ms"), std::string::npos);
    BOOST_CHECK(!parse({{"delay-ms", "10"}}, error));
    BOOST_CHECK_NE(error.find("takes link-offset-ms"), std::string::npos);
    BOOST_CHECK(!parse({{"link-offset-ms", "150"}, {"delay-ms", "110"}}, error));
    BOOST_CHECK_NE(error.find("less than link-offset-ms less latency-ms (110 ms)"),
                   std::string::npos);
    BOOST_CHECK(parse({{"link-offset-ms", "150"}, {"delay-ms", "109"}}, error));
    BOOST_CHECK(!parse({{"link-offset-ms", "150"}, {"delay-ms", "-1"}}, error));
}

BOOST_AUTO_TEST_SUITE_END()
