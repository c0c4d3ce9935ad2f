// A libpulse stream's channel order put into audiod's and back
// (pulse/channel_order.h).
#include "pulse/channel_order.h"
#include "pulse/server_facts.h"

#include <boost/test/unit_test.hpp>

using namespace audiod::pulse;

namespace {

// PulseAudio's channel positions.
constexpr uint8_t kLeft = 1;
constexpr uint8_t kRight = 2;
constexpr uint8_t kCenter = 3;
constexpr uint8_t kRearLeft = 5;
constexpr uint8_t kRearRight = 6;
constexpr uint8_t kLfe = 7;
constexpr uint8_t kAux0 = 12;

} // namespace

BOOST_AUTO_TEST_SUITE(pulse_channel_order)

BOOST_AUTO_TEST_CASE(the_standard_order_needs_nothing) {
    for (uint32_t channels = 1; channels <= 8; ++channels) {
        BOOST_CHECK(!standard_order_of(standard_channel_map(channels)));
    }
    BOOST_CHECK(!standard_order_of({}));
}

BOOST_AUTO_TEST_CASE(another_order_of_the_same_positions_is_put_in_order) {
    const auto swapped = standard_order_of({{kRight, kLeft}});
    BOOST_REQUIRE(swapped);
    BOOST_CHECK(*swapped == (std::vector<uint8_t>{1, 0}));
    // 5.1 with the LFE last, as some decoders write it.
    const auto surround =
        standard_order_of({{kLeft, kRight, kCenter, kRearLeft, kRearRight, kLfe}});
    BOOST_REQUIRE(surround);
    BOOST_CHECK(*surround == (std::vector<uint8_t>{0, 1, 2, 5, 3, 4}));
    BOOST_CHECK(inverse_order(*surround) == (std::vector<uint8_t>{0, 1, 2, 4, 5, 3}));
}

BOOST_AUTO_TEST_CASE(maps_that_are_not_an_order_of_the_standard_are_taken_as_they_are) {
    BOOST_CHECK(!standard_order_of({{kLeft, kAux0}})); // a position it has not
    BOOST_CHECK(!standard_order_of({{kLeft, kLeft}})); // one position twice
    BOOST_CHECK(!standard_order_of({{kRight, kRight}}));
}

BOOST_AUTO_TEST_CASE(frames_are_reordered_and_back) {
    const std::vector<uint8_t> order{1, 0};
    // Two stereo s16 frames: L0 R0 L1 R1.
    const std::vector<uint8_t> in{0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08};
    std::vector<uint8_t> out(in.size());
    reorder_frames(in, out, order, 2);
    BOOST_CHECK(out == (std::vector<uint8_t>{0x03, 0x04, 0x01, 0x02, 0x07, 0x08, 0x05, 0x06}));
    std::vector<uint8_t> back(in.size());
    reorder_frames(out, back, inverse_order(order), 2);
    BOOST_CHECK(back == in);
}

BOOST_AUTO_TEST_SUITE_END()
