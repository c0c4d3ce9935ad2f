// The modules' option reader (modules/support/device_options.h): a device
// refuses a key its option table lacks, naming it and the keys it knows.
#include "device_options.h"

#include <boost/test/unit_test.hpp>

#include <vector>

using namespace audiod;

namespace {

constexpr audiod_option_spec kSpecs[] = {
    {"device", "string", "default", "", "which one"},
    {"periods", "integer", "3", "2..16", "how many"},
};

audiod_device_config config_of(const std::vector<audiod_option>& options) {
    return {"dev", 48000, 2, 256, options.data(), options.size()};
}

} // namespace

BOOST_AUTO_TEST_SUITE(device_options)

BOOST_AUTO_TEST_CASE(keys_the_table_lists_pass_in_any_order_and_number) {
    for (const std::vector<audiod_option>& given : {std::vector<audiod_option>{},
                                                    {{"periods", "4"}},
                                                    {{"periods", "4"}, {"device", "hw:0"}}}) {
        const auto config = config_of(given);
        BOOST_CHECK(!DeviceOptions(config).check_keys(kSpecs, "the x sink"));
    }
}

BOOST_AUTO_TEST_CASE(the_first_unknown_key_is_named_with_the_keys_known) {
    const std::vector<audiod_option> given = {
        {"device", "hw:0"}, {"colour", "blue"}, {"size", "9"}};
    const auto config = config_of(given);
    const auto refusal = DeviceOptions(config).check_keys(kSpecs, "the x sink");
    BOOST_REQUIRE(refusal);
    BOOST_CHECK_EQUAL(*refusal, "the x sink has no option 'colour' (known: device, periods)");
}

BOOST_AUTO_TEST_CASE(keys_match_whole_and_case_sensitive) {
    for (const char* key : {"Device", "device ", "dev", "devices", ""}) {
        const std::vector<audiod_option> given = {{key, "x"}};
        const auto config = config_of(given);
        const auto refusal = DeviceOptions(config).check_keys(kSpecs, "the x source");
        BOOST_REQUIRE_MESSAGE(refusal, "'" << key << "' passed");
        BOOST_CHECK_EQUAL(*refusal, "the x source has no option '" + std::string(key) +
                                        "' (known: device, periods)");
    }
}

BOOST_AUTO_TEST_CASE(a_device_without_options_refuses_every_key) {
    const std::vector<audiod_option> none;
    BOOST_CHECK(!DeviceOptions(config_of(none)).check_keys({}, "the null sink"));
    const std::vector<audiod_option> given = {{"colour", "blue"}};
    const auto refusal = DeviceOptions(config_of(given)).check_keys({}, "the null sink");
    BOOST_REQUIRE(refusal);
    BOOST_CHECK_EQUAL(*refusal, "the null sink has no option 'colour' (known: none)");
}

BOOST_AUTO_TEST_CASE(option_keys_lists_the_table_in_its_order) {
    BOOST_CHECK_EQUAL(option_keys(kSpecs), "device, periods");
    BOOST_CHECK_EQUAL(option_keys({}), "none");
}

BOOST_AUTO_TEST_SUITE_END()
