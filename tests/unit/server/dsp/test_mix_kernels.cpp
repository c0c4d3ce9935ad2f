// Mixing arithmetic: exactness where it is promised, saturation, ramps.
#include "dsp/gain_ramp.h"
#include "dsp/mix_kernels.h"

#include <boost/test/unit_test.hpp>

#include <cmath>
#include <limits>
#include <vector>

using namespace audiod;

BOOST_AUTO_TEST_SUITE(mix_kernels)

BOOST_AUTO_TEST_CASE(every_s16_value_round_trips_at_unity) {
    std::vector<int16_t> in(65536);
    for (int i = 0; i < 65536; ++i) {
        in[i] = static_cast<int16_t>(i - 32768);
    }
    std::vector<float> bus(in.size(), 0.0f);
    mix::accumulate_s16(bus.data(), in.data(), in.size(), 1.0f);
    std::vector<int16_t> out(in.size());
    mix::bus_to_s16(out.data(), bus.data(), bus.size());
    BOOST_CHECK(in == out);
}

BOOST_AUTO_TEST_CASE(s16_output_saturates_and_rounds_to_nearest) {
    const std::vector<float> bus{2.0f,
                                 -2.0f,
                                 1.0f,
                                 -1.0f,
                                 0.5f / 32768.0f,
                                 1.5f / 32768.0f,
                                 -1.5f / 32768.0f,
                                 std::numeric_limits<float>::infinity()};
    std::vector<int16_t> out(bus.size());
    mix::bus_to_s16(out.data(), bus.data(), bus.size());
    BOOST_CHECK_EQUAL(out[0], 32767);
    BOOST_CHECK_EQUAL(out[1], -32768);
    BOOST_CHECK_EQUAL(out[2], 32767);
    BOOST_CHECK_EQUAL(out[3], -32768);
    BOOST_CHECK_EQUAL(out[4], 0); // 0.5 rounds to even
    BOOST_CHECK_EQUAL(out[5], 2); // 1.5 rounds to even
    BOOST_CHECK_EQUAL(out[6], -2);
    BOOST_CHECK_EQUAL(out[7], 32767);
}

BOOST_AUTO_TEST_CASE(s16_output_maps_nan_to_a_bound_not_undefined_behaviour) {
    const std::vector<float> bus{std::numeric_limits<float>::quiet_NaN(), 1e30f, -1e30f};
    std::vector<int16_t> out(bus.size());
    mix::bus_to_s16(out.data(), bus.data(), bus.size());
    BOOST_CHECK_EQUAL(out[0], 32767);
    BOOST_CHECK_EQUAL(out[1], 32767);
    BOOST_CHECK_EQUAL(out[2], -32768);
}

BOOST_AUTO_TEST_CASE(float_input_is_sanitised) {
    const std::vector<float> in{std::numeric_limits<float>::quiet_NaN(), 100.0f, -100.0f, 0.5f};
    std::vector<float> bus(in.size(), 0.0f);
    mix::accumulate_f32(bus.data(), in.data(), in.size(), 1.0f);
    BOOST_CHECK_EQUAL(bus[0], 0.0f);
    BOOST_CHECK_EQUAL(bus[1], mix::kMaxFloatSample);
    BOOST_CHECK_EQUAL(bus[2], -mix::kMaxFloatSample);
    BOOST_CHECK_EQUAL(bus[3], 0.5f);
}

BOOST_AUTO_TEST_CASE(s32_output_saturates_at_the_true_limits) {
    const std::vector<float> bus{1.0f, -1.0f, 0.5f, 4.0f};
    std::vector<int32_t> out(bus.size());
    mix::bus_to_s32(out.data(), bus.data(), bus.size());
    BOOST_CHECK_EQUAL(out[0], 2147483647);
    BOOST_CHECK_EQUAL(out[1], -2147483647 - 1);
    BOOST_CHECK_EQUAL(out[2], 1073741824);
    BOOST_CHECK_EQUAL(out[3], 2147483647);
}

BOOST_AUTO_TEST_CASE(f32_output_is_clamped) {
    const std::vector<float> bus{1.5f, -1.5f, 0.25f};
    std::vector<float> out(bus.size());
    mix::bus_to_f32(out.data(), bus.data(), bus.size());
    BOOST_CHECK_EQUAL(out[0], 1.0f);
    BOOST_CHECK_EQUAL(out[1], -1.0f);
    BOOST_CHECK_EQUAL(out[2], 0.25f);
}

BOOST_AUTO_TEST_CASE(accumulate_adds_with_gain) {
    std::vector<float> bus{0.25f, 0.25f};
    const int16_t in[2] = {16384, -16384};
    mix::accumulate_s16(bus.data(), in, 2, 0.5f);
    BOOST_CHECK_EQUAL(bus[0], 0.5f);
    BOOST_CHECK_EQUAL(bus[1], 0.0f);
    const float fin[2] = {0.5f, 1.0f};
    mix::accumulate_f32(bus.data(), fin, 2, 2.0f);
    BOOST_CHECK_EQUAL(bus[0], 1.5f);
    BOOST_CHECK_EQUAL(bus[1], 2.0f);
}

BOOST_AUTO_TEST_CASE(ramp_kernels_step_per_frame) {
    // Two channels, four frames, gain 0 -> 0.75 in steps of 0.25.
    std::vector<float> bus(8, 0.0f);
    const std::vector<float> ones(8, 1.0f);
    mix::accumulate_f32_ramp(bus.data(), ones.data(), 4, 2, 0.0f, 0.25f);
    const std::vector<float> expected{0, 0, 0.25f, 0.25f, 0.5f, 0.5f, 0.75f, 0.75f};
    BOOST_CHECK(bus == expected);

    std::vector<float> bus16(8, 0.0f);
    const std::vector<int16_t> half(8, 16384);
    mix::accumulate_s16_ramp(bus16.data(), half.data(), 4, 2, 1.0f, -0.25f);
    BOOST_CHECK_EQUAL(bus16[0], 0.5f);
    BOOST_CHECK_EQUAL(bus16[7], 0.125f);

    std::vector<float> scaled(4, 1.0f);
    mix::scale_ramp(scaled.data(), 4, 1, 1.0f, -0.25f);
    BOOST_CHECK_EQUAL(scaled[3], 0.25f);
}

BOOST_AUTO_TEST_CASE(gain_ramp_lands_exactly_on_target) {
    GainRamp ramp(1.0f);
    BOOST_CHECK(!ramp.ramping());
    ramp.set_target(0.1f, 240);
    BOOST_CHECK(ramp.ramping());
    BOOST_CHECK_CLOSE(ramp.step(), (0.1f - 1.0f) / 240.0f, 1e-4);
    for (int i = 0; i < 7; ++i) {
        ramp.advance(31);
    }
    BOOST_CHECK(ramp.ramping());
    ramp.advance(31); // 248 > 240: ends
    BOOST_CHECK(!ramp.ramping());
    BOOST_CHECK_EQUAL(ramp.current(), 0.1f);
    BOOST_CHECK_EQUAL(ramp.step(), 0.0f);

    ramp.set_target(0.1f, 240); // no change: no ramp
    BOOST_CHECK(!ramp.ramping());
    ramp.reset(1.0f);
    BOOST_CHECK_EQUAL(ramp.current(), 1.0f);
}

BOOST_AUTO_TEST_SUITE_END()
