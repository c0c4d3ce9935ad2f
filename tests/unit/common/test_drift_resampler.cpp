// The drift resampler: frames pass through unchanged at ratio 1, a tone
// comes out clean at the ratios clock drift asks for, and feeding it in
// small pieces with a ratio that changes as it goes gives the same audio as
// one piece (no seams where the pieces meet); a skip moves on exactly.
#include "common/drift_resampler.h"
#include "support/tone_analysis.h"

#include <boost/test/unit_test.hpp>

#include <cmath>
#include <random>
#include <vector>

using audiod::DriftResampler;

namespace {

std::vector<float> stereo_tone(size_t frames, double frequency, double rate) {
    std::vector<float> out(frames * 2);
    for (size_t i = 0; i < frames; ++i) {
        const auto v = static_cast<float>(0.5 * std::sin(2 * M_PI * frequency * i / rate));
        out[2 * i] = v;
        out[2 * i + 1] = -v;
    }
    return out;
}

// Feeds `in` in pieces of `piece` frames, pulling after each at `ratio(n)`
// (n: frames output so far).
template <class Ratio>
std::vector<float> run(const std::vector<float>& in, uint32_t piece, Ratio&& ratio) {
    DriftResampler resampler(2, piece + 8);
    std::vector<float> out;
    std::vector<float> chunk(8192 * 2);
    const size_t frames = in.size() / 2;
    for (size_t at = 0; at < frames; at += piece) {
        const auto count = static_cast<uint32_t>(std::min<size_t>(piece, frames - at));
        BOOST_REQUIRE_EQUAL(resampler.push(in.data() + at * 2, count), count);
        while (const uint32_t n = resampler.pull(chunk.data(), 8192, ratio(out.size() / 2))) {
            out.insert(out.end(), chunk.begin(), chunk.begin() + n * 2);
        }
    }
    return out;
}

} // namespace

BOOST_AUTO_TEST_SUITE(drift_resampler)

BOOST_AUTO_TEST_CASE(ratio_one_passes_frames_through_unchanged) {
    std::mt19937 rng(7);
    std::uniform_real_distribution<float> sample(-1, 1);
    std::vector<float> in(48000 * 2);
    for (float& s : in) {
        s = sample(rng);
    }
    const std::vector<float> out = run(in, 256, [](size_t) { return 1.0; });
    // The last two frames wait for the frames after them.
    BOOST_REQUIRE_EQUAL(out.size(), in.size() - 2 * 2);
    for (size_t i = 0; i < out.size(); ++i) {
        BOOST_REQUIRE_EQUAL(out[i], in[i]);
    }
}

BOOST_AUTO_TEST_CASE(a_tone_stays_clean_at_drift_ratios) {
    const double rate = 48000;
    const std::vector<float> in = stereo_tone(5 * 48000, 1000, rate);
    for (const double ratio : {1.005, 1.001, 0.999, 0.995}) {
        const std::vector<float> out = run(in, 256, [&](size_t) { return ratio; });
        const double expected_frames = (in.size() / 2.0 - 2) / ratio;
        BOOST_CHECK_LE(std::abs(out.size() / 2.0 - expected_frames), 2.0);
        // Read at the nominal rate, the tone's frequency moves by the ratio.
        const size_t skip = 480;
        const auto m = audiod::measure_tone(out.data() + skip * 2, out.size() / 2 - skip, 2,
                                            1000 * ratio, rate);
        BOOST_TEST_MESSAGE("ratio " << ratio << ": amplitude " << m.amplitude << ", THD+N "
                                    << m.thd_n_db << " dB");
        BOOST_CHECK_CLOSE(m.amplitude, 0.5, 0.1);
        BOOST_CHECK_LT(m.thd_n_db, -90);
    }
}

BOOST_AUTO_TEST_CASE(pieces_and_a_changing_ratio_leave_no_seams) {
    const std::vector<float> in = stereo_tone(48000, 997, 48000);
    const std::vector<float> whole = run(in, 48000, [](size_t) { return 1.0; });
    BOOST_CHECK_EQUAL(whole.size(), in.size() - 4);
    // The ratio wanders around 1 as a clock loop moves it, fed in small
    // and in large pieces.
    const auto wander = [](size_t n) { return 1 + 0.003 * std::sin(n / 3000.0); };
    for (const uint32_t piece : {64u, 1000u}) {
        const std::vector<float> out = run(in, piece, wander);
        BOOST_CHECK_GT(out.size(), in.size() * 0.99);
        // A 997 Hz tone at 0.5 moves at most 2π·997/48000·0.5 ≈ 0.065 a
        // frame (0.3 % more with the ratio); a seam — a skipped or repeated
        // stretch, a frame of silence — jumps further.
        double worst_step = 0;
        for (size_t i = 2; i < out.size(); i += 2) {
            worst_step = std::max<double>(worst_step, std::abs(out[i] - out[i - 2]));
        }
        BOOST_TEST_MESSAGE("pieces of " << piece << ": largest step " << worst_step);
        BOOST_CHECK_LT(worst_step, 0.066);
    }
}

BOOST_AUTO_TEST_CASE(a_skip_moves_on_by_whole_frames_and_no_further_than_the_input) {
    DriftResampler resampler(1, 64);
    std::vector<float> in(32);
    for (size_t i = 0; i < in.size(); ++i) {
        in[i] = static_cast<float>(i);
    }
    BOOST_REQUIRE_EQUAL(resampler.push(in.data(), 32), 32u);
    float out[4];
    BOOST_REQUIRE_EQUAL(resampler.pull(out, 2, 1.0), 2u); // frames 0 and 1
    BOOST_CHECK_EQUAL(resampler.skip(5), 5.0);
    BOOST_REQUIRE_EQUAL(resampler.pull(out, 1, 1.0), 1u);
    BOOST_CHECK_EQUAL(out[0], 7.0f);                  // 2 + 5
    BOOST_CHECK_EQUAL(resampler.skip(100), 32.0 - 8); // only what it holds
    BOOST_CHECK_EQUAL(resampler.buffered(), 0.0);
}

BOOST_AUTO_TEST_CASE(it_takes_no_more_than_it_holds) {
    DriftResampler resampler(1, 100);
    std::vector<float> frames(500, 0.25f);
    BOOST_CHECK_EQUAL(resampler.push(frames.data(), 500), 100u);
    BOOST_CHECK_EQUAL(resampler.push(frames.data(), 10), 0u);
    std::vector<float> out(500);
    BOOST_CHECK_EQUAL(resampler.pull(out.data(), 50, 1.0), 50u);
    BOOST_CHECK_EQUAL(resampler.push(frames.data(), 500), 50u);
    resampler.clear();
    BOOST_CHECK_EQUAL(resampler.buffered(), 0.0);
    BOOST_CHECK_EQUAL(resampler.pull(out.data(), 50, 1.0), 0u);
}

BOOST_AUTO_TEST_SUITE_END()
