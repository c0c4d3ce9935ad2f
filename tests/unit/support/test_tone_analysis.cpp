// The tone measure that the resampling and integration tests judge audio
// by: it must read a tone's amplitude and everything beside it exactly, for
// tones as long as the integration tests record (20 s and more), where its
// sine and cosine come from a turning phasor rather than from libm.
#include "support/tone_analysis.h"

#include <boost/test/unit_test.hpp>

#include <cmath>
#include <vector>

using audiod::measure_tone;

namespace {

constexpr double kRate = 48000;

// `frames` of interleaved stereo: a tone on the left, silence on the right.
std::vector<float> left_tone(size_t frames, double hz, double amplitude, double phase,
                             double offset, double harmonic = 0) {
    std::vector<float> out(frames * 2);
    for (size_t i = 0; i < frames; ++i) {
        const double t = 2 * M_PI * hz * double(i) / kRate;
        out[2 * i] = static_cast<float>(amplitude * std::sin(t + phase) +
                                        harmonic * std::sin(3 * t) + offset);
    }
    return out;
}

} // namespace

BOOST_AUTO_TEST_SUITE(tone_analysis)

BOOST_AUTO_TEST_CASE(a_clean_tone_of_twenty_seconds_is_read_to_a_float_s_precision) {
    // 960,000 frames: thousands of the phasor's exact restarts, and the
    // rounding of 255 turns between each.
    const std::vector<float> tone = left_tone(960000, 999.0, 0.5, 0.3, 0.01);
    const audiod::ToneMeasure m = measure_tone(tone.data(), 960000, 2, 999.0, kRate);
    BOOST_CHECK_CLOSE(m.amplitude, 0.5, 1e-5);
    // A float holds the tone to about -150 dB; the offset is not the tone's
    // distortion.
    BOOST_CHECK_LT(m.thd_n_db, -130);
}

BOOST_AUTO_TEST_CASE(a_harmonic_forty_decibels_down_reads_as_minus_forty) {
    const std::vector<float> tone = left_tone(48000, 1000.0, 0.5, 1.0, 0, 0.005);
    const audiod::ToneMeasure m = measure_tone(tone.data(), 48000, 2, 1000.0, kRate);
    BOOST_CHECK_CLOSE(m.amplitude, 0.5, 1e-3);
    BOOST_CHECK_CLOSE(m.thd_n_db, -40.0, 0.01);
}

BOOST_AUTO_TEST_CASE(a_tone_measured_at_the_wrong_frequency_is_mostly_residue) {
    // 0.3 Hz off over 20 s: the tone turns six times against the fit.
    const std::vector<float> tone = left_tone(960000, 999.3, 0.5, 0, 0);
    const audiod::ToneMeasure m = measure_tone(tone.data(), 960000, 2, 999.0, kRate);
    BOOST_CHECK_LT(m.amplitude, 0.05);
    BOOST_CHECK_GT(m.thd_n_db, 20);
}

BOOST_AUTO_TEST_CASE(the_silent_channel_has_no_tone) {
    const std::vector<float> tone = left_tone(4800, 1000.0, 0.5, 0, 0);
    const audiod::ToneMeasure m = measure_tone(tone.data() + 1, 4800, 2, 1000.0, kRate);
    BOOST_CHECK_EQUAL(m.amplitude, 0.0);
    BOOST_CHECK_EQUAL(m.thd_n_db, 0.0);
}

BOOST_AUTO_TEST_SUITE_END()
