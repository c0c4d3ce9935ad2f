#define BOOST_TEST_MODULE protocol
#include <boost/test/unit_test.hpp>
