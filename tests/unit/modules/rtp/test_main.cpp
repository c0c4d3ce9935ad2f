#define BOOST_TEST_MODULE rtp
#include <boost/test/unit_test.hpp>
