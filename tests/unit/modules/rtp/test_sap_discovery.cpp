// What a discovering RTP source calls the sources it finds: the session's
// name, cut to what a source name may hold.
#include "sap_discovery.h"

#include <boost/test/unit_test.hpp>

using audiod::rtp::SapDiscovery;

BOOST_AUTO_TEST_SUITE(sap_discovery)

BOOST_AUTO_TEST_CASE(a_session_name_becomes_a_source_name) {
    BOOST_CHECK_EQUAL(SapDiscovery::source_name("kitchen", 46000), "kitchen");
    BOOST_CHECK_EQUAL(SapDiscovery::source_name("audiod net on box", 46000), "audiod-net-on-box");
    BOOST_CHECK_EQUAL(SapDiscovery::source_name("  Studio A  (main) ", 46000), "Studio-A-main");
    BOOST_CHECK_EQUAL(SapDiscovery::source_name("\xc3\xa9t\xc3\xa9", 46000), "t");
    BOOST_CHECK_EQUAL(SapDiscovery::source_name("...", 46000), "rtp-46000");
    BOOST_CHECK_EQUAL(SapDiscovery::source_name("", 5004), "rtp-5004");
    BOOST_CHECK_EQUAL(SapDiscovery::source_name(std::string(200, 'x'), 1).size(), 48u);
}

BOOST_AUTO_TEST_SUITE_END()
