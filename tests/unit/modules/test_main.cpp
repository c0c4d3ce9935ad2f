#define BOOST_TEST_MODULE modules
#include <boost/test/unit_test.hpp>
