// How the portaudio module picks a device from its `device` and `host-api`
// options: exact names first, then a unique part of one, indexes, the
// default, and refusals that list the candidates.
#define BOOST_TEST_MODULE portaudio
#include <boost/test/unit_test.hpp>

#include "device_match.h"

using namespace audiod::portaudio;

namespace {

// Two ALSA PCMs, a capture-only one, and a JACK device named like an ALSA one.
const std::vector<Candidate> kDevices = {
    {0, "testcard", "alsa", 8},
    {1, "default", "alsa", 8},
    {2, "USB Mic: Audio (hw:1,0)", "alsa", 0},
    {3, "system", "jack", 2},
    {4, "testcard monitor", "jack", 2},
};

DeviceRequest ask(std::optional<std::string> device, std::optional<std::string> api = {},
                  int default_index = 1) {
    DeviceRequest r;
    r.device = std::move(device);
    r.api = std::move(api);
    r.default_index = default_index;
    return r;
}

int chosen(const DeviceRequest& request) {
    const auto result = match_device(kDevices, request);
    if (const auto* why = std::get_if<std::string>(&result)) {
        BOOST_FAIL(*why);
    }
    return std::get<int>(result);
}

std::string refused(const DeviceRequest& request) {
    const auto result = match_device(kDevices, request);
    BOOST_REQUIRE(std::holds_alternative<std::string>(result));
    return std::get<std::string>(result);
}

} // namespace

BOOST_AUTO_TEST_CASE(an_exact_name_wins_over_names_that_contain_it) {
    // "testcard" is also part of "testcard monitor": the exact one is meant.
    BOOST_CHECK_EQUAL(chosen(ask("testcard")), 0);
    BOOST_CHECK_EQUAL(chosen(ask("testcard monitor")), 4);
}

BOOST_AUTO_TEST_CASE(a_unique_part_of_a_name_and_an_index_name_a_device) {
    BOOST_CHECK_EQUAL(chosen(ask("syst")), 3);
    BOOST_CHECK_EQUAL(chosen(ask("3")), 3);
    BOOST_CHECK_EQUAL(chosen(ask("monitor")), 4);
}

BOOST_AUTO_TEST_CASE(host_api_narrows_the_search) {
    BOOST_CHECK_EQUAL(chosen(ask("card", "jack")), 4);
    BOOST_CHECK(refused(ask("system", "alsa"))
                    .find("no PortAudio device that can play "
                          "through alsa is named 'system'") != std::string::npos);
    BOOST_CHECK(refused(ask("0", "jack")).find("device 0 cannot play through jack") !=
                std::string::npos);
}

BOOST_AUTO_TEST_CASE(no_name_means_the_default_device) {
    BOOST_CHECK_EQUAL(chosen(ask(std::nullopt)), 1);
    BOOST_CHECK(refused(ask(std::nullopt, {}, -1)).find("no default device to play") !=
                std::string::npos);
}

BOOST_AUTO_TEST_CASE(a_device_that_cannot_play_is_not_a_candidate) {
    const std::string why = refused(ask("USB Mic"));
    BOOST_CHECK(why.find("no PortAudio device that can play is named 'USB Mic'") !=
                std::string::npos);
    const std::string listed = why.substr(why.find("devices that can:"));
    BOOST_CHECK_MESSAGE(listed.find("USB") == std::string::npos, listed);
    BOOST_CHECK(refused(ask("2")).find("device 2 cannot play") != std::string::npos);
}

BOOST_AUTO_TEST_CASE(refusals_list_the_candidates) {
    const std::string none = refused(ask("speakers"));
    BOOST_CHECK_MESSAGE(none.find("0 \"testcard\" (alsa), 1 \"default\" (alsa), 3 \"system\" "
                                  "(jack), 4 \"testcard monitor\" (jack)") != std::string::npos,
                        none);
    const std::string several = refused(ask("t"));
    BOOST_CHECK_MESSAGE(several.find("'t' names 4 PortAudio devices") != std::string::npos,
                        several);
    BOOST_CHECK(several.find("give the whole name, an index, or host-api") != std::string::npos);
    BOOST_CHECK(refused(ask("x", "coreaudio"))
                    .find("no host API 'coreaudio' here (it has: alsa, "
                          "jack)") != std::string::npos);
}
