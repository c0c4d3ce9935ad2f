// Converting client streams for a sink: every sample format's decoding, the
// channel mixes, the resampler's quality, and the whole path through a real
// sink's RT cycle (stepped device).
#include "dsp/channel_mix.h"
#include "dsp/convert_kernels.h"
#include "dsp/mix_kernels.h"
#include "dsp/resampler.h"
#include "support/tone_analysis.h"
#include "unit/server/stepped_sink.h"

#include <boost/test/unit_test.hpp>

#include <cmath>
#include <cstring>
#include <vector>

using namespace audiod;
using namespace audiod::test;

namespace {

ChannelMix identity(uint32_t channels) {
    return make_channel_mix(channels, channels);
}

// Every s16 value, encoded in `format` the way a client would hold the same
// level, decoded, and turned back into s16 by the sink's output stage.
std::vector<int16_t> round_trip_all_s16(SampleFormat format) {
    std::vector<int16_t> values(65536);
    for (int i = 0; i < 65536; ++i) {
        values[i] = static_cast<int16_t>(i - 32768);
    }
    const unsigned bytes = sample_bytes(format);
    std::vector<uint8_t> encoded(values.size() * bytes);
    for (size_t i = 0; i < values.size(); ++i) {
        const int32_t v = values[i];
        uint8_t* out = encoded.data() + i * bytes;
        if (format == SampleFormat::s16le) {
            std::memcpy(out, &values[i], 2);
        } else if (format == SampleFormat::s24le || format == SampleFormat::s24_3le) {
            // A junk high byte in the 32-bit container must be ignored.
            const uint32_t u = (static_cast<uint32_t>(v * 256) & 0xffffffu) | 0xab000000u;
            std::memcpy(out, &u, bytes);
        } else if (format == SampleFormat::s32le) {
            const int32_t w = v * 65536;
            std::memcpy(out, &w, 4);
        } else {
            const float f = static_cast<float>(v) / 32768.0f;
            std::memcpy(out, &f, 4);
        }
    }
    std::vector<float> decoded(values.size());
    mix::decode_frames(format, encoded.data(), values.size(), identity(1), decoded.data());
    std::vector<int16_t> back(values.size());
    mix::bus_to_s16(back.data(), decoded.data(), decoded.size());
    return back;
}

} // namespace

BOOST_AUTO_TEST_SUITE(conversion)

BOOST_AUTO_TEST_CASE(every_lossless_format_decodes_bit_exact) {
    for (const SampleFormat format :
         {SampleFormat::s16le, SampleFormat::s24le, SampleFormat::s24_3le, SampleFormat::s32le,
          SampleFormat::f32le}) {
        const auto back = round_trip_all_s16(format);
        for (int i = 0; i < 65536; ++i) {
            BOOST_REQUIRE_MESSAGE(back[i] == i - 32768, format_name(format)
                                                            << ": " << i - 32768 << " came back as "
                                                            << back[i]);
        }
    }
}

BOOST_AUTO_TEST_CASE(integer_extremes_and_u8_decode_to_exact_levels) {
    const uint8_t u8[] = {0, 128, 255};
    float out[3];
    mix::decode_frames(SampleFormat::u8, u8, 3, identity(1), out);
    BOOST_CHECK_EQUAL(out[0], -1.0f);
    BOOST_CHECK_EQUAL(out[1], 0.0f);
    BOOST_CHECK_EQUAL(out[2], 127.0f / 128.0f);
    const int32_t s32[] = {INT32_MIN, 0, INT32_MAX};
    mix::decode_frames(SampleFormat::s32le, reinterpret_cast<const uint8_t*>(s32), 3, identity(1),
                       out);
    BOOST_CHECK_EQUAL(out[0], -1.0f);
    BOOST_CHECK_EQUAL(out[1], 0.0f);
    BOOST_CHECK_CLOSE(out[2], 1.0f, 1e-5);
    const uint8_t s24_3[] = {0x00, 0x00, 0x80, 0xff, 0xff, 0x7f, 0xff, 0xff, 0xff};
    mix::decode_frames(SampleFormat::s24_3le, s24_3, 3, identity(1), out);
    BOOST_CHECK_EQUAL(out[0], -1.0f);
    BOOST_CHECK_EQUAL(out[1], 8388607.0f / 8388608.0f);
    BOOST_CHECK_EQUAL(out[2], -1.0f / 8388608.0f);
    // Hostile floats are tamed as in the direct path.
    const float hostile[] = {NAN, INFINITY, -1e30f};
    mix::decode_frames(SampleFormat::f32le, reinterpret_cast<const uint8_t*>(hostile), 3,
                       identity(1), out);
    BOOST_CHECK_EQUAL(out[0], 0.0f);
    BOOST_CHECK_EQUAL(out[1], mix::kMaxFloatSample);
    BOOST_CHECK_EQUAL(out[2], -mix::kMaxFloatSample);
}

BOOST_AUTO_TEST_CASE(record_streams_encode_every_format_back_exactly) {
    // Every s16 level, as float, encoded in each format and decoded again.
    std::vector<float> levels(65536);
    for (int i = 0; i < 65536; ++i) {
        levels[i] = static_cast<float>(i - 32768) / 32768.0f;
    }
    for (const SampleFormat format :
         {SampleFormat::u8, SampleFormat::s16le, SampleFormat::s24le, SampleFormat::s24_3le,
          SampleFormat::s32le, SampleFormat::f32le}) {
        std::vector<uint8_t> encoded(levels.size() * sample_bytes(format));
        mix::encode_samples(format, levels.data(), levels.size(), encoded.data());
        std::vector<float> back(levels.size());
        mix::decode_frames(format, encoded.data(), levels.size(), identity(1), back.data());
        for (size_t i = 0; i < levels.size(); ++i) {
            // u8 keeps the top 8 bits (rounded, saturating at 127/128);
            // every other format all 16.
            const bool u8 = format == SampleFormat::u8;
            const float step = u8 ? 1.0f / 128 : 0.0f;
            const float expected = u8 ? std::min(levels[i], 127.0f / 128) : levels[i];
            BOOST_REQUIRE_MESSAGE(std::fabs(back[i] - expected) <= step / 2 + 1e-9f,
                                  format_name(format)
                                      << ": " << levels[i] << " came back as " << back[i]);
        }
    }
    // Overs saturate instead of wrapping.
    const float overs[] = {2.0f, -2.0f};
    int32_t s32[2];
    mix::encode_samples(SampleFormat::s32le, overs, 2, reinterpret_cast<uint8_t*>(s32));
    BOOST_CHECK_EQUAL(s32[0], INT32_MAX);
    BOOST_CHECK_EQUAL(s32[1], INT32_MIN);
    uint8_t s24[6];
    mix::encode_samples(SampleFormat::s24_3le, overs, 2, s24);
    BOOST_CHECK(s24[0] == 0xff && s24[1] == 0xff && s24[2] == 0x7f);
    BOOST_CHECK(s24[3] == 0x00 && s24[4] == 0x00 && s24[5] == 0x80);
    uint8_t u8[2];
    mix::encode_samples(SampleFormat::u8, overs, 2, u8);
    BOOST_CHECK(u8[0] == 255 && u8[1] == 0);
}

BOOST_AUTO_TEST_CASE(mono_goes_to_both_speakers_at_full_level) {
    const ChannelMix m = make_channel_mix(1, 2);
    BOOST_CHECK_EQUAL(m.coefficient[0][0], 1.0f);
    BOOST_CHECK_EQUAL(m.coefficient[1][0], 1.0f);
    const int16_t mono[] = {1000, -2000};
    float out[4];
    mix::decode_frames(SampleFormat::s16le, reinterpret_cast<const uint8_t*>(mono), 2, m, out);
    BOOST_CHECK_EQUAL(out[0], 1000.0f / 32768);
    BOOST_CHECK_EQUAL(out[1], 1000.0f / 32768);
    BOOST_CHECK_EQUAL(out[2], -2000.0f / 32768);
    BOOST_CHECK_EQUAL(out[3], -2000.0f / 32768);
    // Mono into 5.1: front left and right, nothing elsewhere.
    const ChannelMix six = make_channel_mix(1, 6);
    for (uint32_t o = 0; o < 6; ++o) {
        BOOST_CHECK_EQUAL(six.coefficient[o][0], o < 2 ? 1.0f : 0.0f);
    }
}

BOOST_AUTO_TEST_CASE(five_one_folds_to_stereo_with_the_documented_coefficients) {
    // FL FR FC LFE RL RR -> L = (FL + .7071 FC + .7071 RL) / 2.4142.
    const ChannelMix m = make_channel_mix(6, 2);
    const float norm = 1.0f + 2 * 0.70710678f;
    const float left[6] = {1 / norm, 0, 0.70710678f / norm, 0, 0.70710678f / norm, 0};
    const float right[6] = {0, 1 / norm, 0.70710678f / norm, 0, 0, 0.70710678f / norm};
    for (int i = 0; i < 6; ++i) {
        BOOST_CHECK_CLOSE(m.coefficient[0][i] + 1, left[i] + 1, 1e-4);
        BOOST_CHECK_CLOSE(m.coefficient[1][i] + 1, right[i] + 1, 1e-4);
    }
    // Full scale on every channel stays within full scale.
    const float loud[6] = {1, 1, 1, 1, 1, 1};
    float out[2];
    mix::decode_frames(SampleFormat::f32le, reinterpret_cast<const uint8_t*>(loud), 1, m, out);
    BOOST_CHECK_LE(out[0], 1.0f + 1e-6f);
    BOOST_CHECK_GE(out[0], 1.0f - 1e-6f);
}

BOOST_AUTO_TEST_CASE(downmixes_and_upmixes_between_every_pair_stay_in_range) {
    for (uint32_t in = 1; in <= kMaxChannels; ++in) {
        for (uint32_t out = 1; out <= kMaxChannels; ++out) {
            const ChannelMix m = make_channel_mix(in, out);
            for (uint32_t o = 0; o < out; ++o) {
                float sum = 0;
                for (uint32_t i = 0; i < in; ++i) {
                    BOOST_REQUIRE_GE(m.coefficient[o][i], 0.0f);
                    sum += m.coefficient[o][i];
                }
                BOOST_REQUIRE_MESSAGE(sum <= 1.0f + 1e-5f, in << "->" << out << " row " << o);
            }
            // Every input channel but LFE is heard somewhere.
            for (uint32_t i = 0; i < in; ++i) {
                const bool lfe = (in == 6 || in == 7 || in == 8) && i == 3;
                float heard = 0;
                for (uint32_t o = 0; o < out; ++o) {
                    heard += m.coefficient[o][i];
                }
                BOOST_CHECK_MESSAGE(lfe || heard > 0,
                                    in << "->" << out << ": channel " << i << " is lost");
            }
        }
    }
    // Stereo to mono is the average; 7.1 to 5.1 sends the sides to the rears.
    const ChannelMix mono = make_channel_mix(2, 1);
    BOOST_CHECK_EQUAL(mono.coefficient[0][0], 0.5f);
    BOOST_CHECK_EQUAL(mono.coefficient[0][1], 0.5f);
    const ChannelMix seven = make_channel_mix(8, 6);
    BOOST_CHECK_EQUAL(seven.coefficient[4][6], 0.5f); // SL -> RL, shared with RL
    BOOST_CHECK_EQUAL(seven.coefficient[3][3], 1.0f); // LFE kept
}

BOOST_AUTO_TEST_CASE(resampling_44100_to_48000_keeps_a_1khz_tone_clean) {
    auto created = Resampler::create(2, 44100, 48000, Resampler::kDefaultQuality);
    BOOST_REQUIRE(std::holds_alternative<std::unique_ptr<Resampler>>(created));
    Resampler& resampler = *std::get<std::unique_ptr<Resampler>>(created);
    const size_t in_frames = 44100 * 2;
    std::vector<float> in(in_frames * 2);
    for (size_t i = 0; i < in_frames; ++i) {
        in[2 * i] = in[2 * i + 1] =
            static_cast<float>(0.5 * std::sin(2 * M_PI * 1000.0 * double(i) / 44100.0));
    }
    // One 256-frame quantum at a time, as the RT thread asks: only the
    // first falls short (the filter fills up), then every one is whole.
    std::vector<float> out;
    std::vector<float> quantum(256 * 2);
    size_t at = 0;
    size_t calls = 0;
    while (at + resampler.input_for(256) + 2 < in_frames) {
        uint32_t used = resampler.input_for(256) + 2;
        uint32_t made = 256;
        resampler.process(in.data() + at * 2, &used, quantum.data(), &made);
        if (calls++ > 0) {
            BOOST_REQUIRE_EQUAL(made, 256u);
        }
        quantum.resize(size_t{made} * 2);
        at += used;
        out.insert(out.end(), quantum.begin(), quantum.end());
        quantum.resize(256 * 2);
    }
    // The 2 s in came out as 2 s, less what is still in the filter.
    BOOST_CHECK_GE(out.size() / 2, 95000u);
    const size_t skip = 4800; // past the filter's start-up
    const ToneMeasure tone =
        measure_tone(out.data() + skip * 2, out.size() / 2 - skip, 2, 1000.0, 48000.0);
    BOOST_TEST_MESSAGE("amplitude " << tone.amplitude << ", THD+N " << tone.thd_n_db << " dB");
    BOOST_CHECK_CLOSE(tone.amplitude, 0.5, 0.5);
    BOOST_CHECK_LT(tone.thd_n_db, -100.0);
    BOOST_CHECK_LT(resampler.latency_frames(), 100u);
}

BOOST_AUTO_TEST_CASE(a_converted_stream_plays_through_the_rt_cycle) {
    // A mono u8 stream at 24 kHz on a stereo 48 kHz sink: twice as many
    // frames come out, on both channels, at the level that went in.
    SinkRig rig({48000, 2, 64}, "f32le");
    const size_t frames = 2400;
    std::vector<uint8_t> tone(frames);
    for (size_t i = 0; i < frames; ++i) {
        tone[i] = static_cast<uint8_t>(
            128 + std::lround(64 * std::sin(2 * M_PI * 1000.0 * double(i) / 24000.0)));
    }
    Stream& s = rig.add_stream(SampleFormat::u8, 4096, 1.0f, 24000, 1);
    BOOST_REQUIRE(!s.conversion.direct);
    BOOST_REQUIRE(s.conversion.resampler != nullptr);
    rig.write(s, tone.data(), frames);
    rig.set_client_flags(s, kClientFlagStarted);
    rig.run_cycles(80);
    const auto out = rig.output<float>();
    BOOST_REQUIRE_GE(out.size(), 2u * 4000);
    size_t sounding = 0;
    for (size_t f = 0; f < out.size() / 2; ++f) {
        BOOST_REQUIRE_EQUAL(out[2 * f], out[2 * f + 1]);
        sounding += std::fabs(out[2 * f]) > 0.01f ? 1 : 0;
    }
    BOOST_CHECK_GT(sounding, 4000u);
    const ToneMeasure measured = measure_tone(out.data() + 2 * 600, 3000, 2, 1000.0, 48000.0);
    BOOST_CHECK_CLOSE(measured.amplitude, 0.5, 2.0);
    // u8 quantisation limits it (about -45 dB), far from a broken path.
    BOOST_CHECK_LT(measured.thd_n_db, -35.0);
    BOOST_CHECK_EQUAL(s.consumed.load(), frames);
}

BOOST_AUTO_TEST_SUITE_END()
