// Audio files users have, through the real tools: audioplay plays a FLAC, an
// Ogg Opus and an MP3 made by ffmpeg (what reaches the sink is checked:
// bit-exact for FLAC, the tone's pitch, level and length for the lossy two),
// and audiorec and the file sink write FLAC.
#include "helpers.h"
#include "support/tone_analysis.h"

#include <boost/test/unit_test.hpp>

#include <cmath>
#include <csignal>

using namespace audiod;
using namespace audiod::test;
using namespace std::chrono_literals;

namespace {

// Encodes IN into OUT with ffmpeg's CODEC (and any further arguments).
void encode(const std::string& in, const std::string& out, std::vector<std::string> codec) {
    std::vector<std::string> argv{
        installed("ffmpeg"), "-nostdin", "-loglevel", "error", "-y", "-i", in};
    argv.insert(argv.end(), codec.begin(), codec.end());
    argv.push_back(out);
    const ProgramResult r = run_program(argv, 60s);
    BOOST_REQUIRE_MESSAGE(r.status == 0, "ffmpeg: " << r.err);
}

std::string float_sink_config(const std::string& path) {
    return "[server]\nrt-priority = 0\n[sinks.out]\ntype = \"file\"\nformat = \"f32le\"\npath = "
           "\"" +
           path + "\"\n";
}

// Plays FILE with audioplay to the end.
void play(const std::string& file) {
    const ProgramResult r =
        run_tool("audioplay", {"--quiet", "--latency-ms", kExactPlayerMs, file}, 60s);
    BOOST_REQUIRE_MESSAGE(r.status == 0, r.err);
}

// A 1 s, 1 kHz tone at half scale, at `rate`, encoded by ffmpeg with
// `codec` into NAME and played: still that tone, at that level, for about
// that long.
void check_lossy_tone(uint32_t rate, const std::vector<std::string>& codec, const std::string& name,
                      double tolerance_seconds) {
    TempDir dir;
    write_tone_wav(dir.file("tone.wav"), rate, 1000.0, 1.0);
    encode(dir.file("tone.wav"), dir.file(name), codec);
    ServerProcess server(float_sink_config(dir.file("out.wav")));
    play(dir.file(name));
    BOOST_REQUIRE_EQUAL(server.stop(SIGTERM), 0);
    const HeardTone heard = hear_tone(read_wav_f32(dir.file("out.wav")), 2, 48000, 1000.0);
    BOOST_CHECK_LE(std::fabs(heard.seconds - 1.0), tolerance_seconds);
    const ToneMeasure& tone = heard.tone;
    BOOST_CHECK_CLOSE(tone.amplitude, 0.5, 5.0);
    BOOST_CHECK_LT(tone.thd_n_db, -30.0);
}

} // namespace

BOOST_AUTO_TEST_SUITE(files)

BOOST_AUTO_TEST_CASE(a_flac_plays_bit_exact) {
    TempDir dir;
    write_signal_wav(dir.file("in.wav"), "random", 48000);
    encode(dir.file("in.wav"), dir.file("in.flac"), {"-c:a", "flac"});
    ServerProcess server(file_sink_config(dir.file("out.wav")));
    play(dir.file("in.flac"));
    BOOST_REQUIRE_EQUAL(server.stop(SIGTERM), 0);
    const auto in = read_wav_s16(dir.file("in.wav"));
    const auto out = read_wav_s16(dir.file("out.wav"));
    const auto start = first_sound(out, 2);
    BOOST_REQUIRE(start);
    BOOST_REQUIRE_GE(out.size(), *start * 2 + in.size());
    BOOST_CHECK(std::equal(in.begin(), in.end(), out.begin() + static_cast<ptrdiff_t>(*start * 2)));
}

BOOST_AUTO_TEST_CASE(an_ogg_opus_file_plays_its_tone) {
    check_lossy_tone(48000, {"-c:a", "libopus", "-b:a", "128k"}, "tone.opus", 0.02);
}

BOOST_AUTO_TEST_CASE(an_mp3_plays_its_tone) {
    // 44.1 kHz, as most MP3s are (the server resamples it), and an MP3
    // carries an encoder delay and padding of a frame or two.
    check_lossy_tone(44100, {"-c:a", "libmp3lame", "-b:a", "192k"}, "tone.mp3", 0.06);
}

BOOST_AUTO_TEST_CASE(audiorec_and_the_file_sink_write_flac) {
    TempDir dir;
    ServerProcess server(file_sink_config(dir.file("out.flac")));
    Recording rec(dir.file("rec.flac"), {"--quiet", "--latency-ms", kExactRecorderMs});
    const ProgramResult played =
        run_tool("audiod-test-client", {"--signal", "sequence", "--frames", "48000"}, 60s);
    BOOST_REQUIRE_MESSAGE(played.status == 0, played.err);
    const ProgramResult r = rec.stop(kExactMargin);
    BOOST_REQUIRE_MESSAGE(r.status == 0, r.err);
    BOOST_REQUIRE_EQUAL(server.stop(SIGTERM), 0);
    // Both files are FLAC, and both hold every frame played, in order.
    for (const char* file : {"out.flac", "rec.flac"}) {
        BOOST_CHECK_EQUAL(file_contents(dir.file(file)).substr(0, 4), "fLaC");
        const Heard heard = hear_sequence(dir.file(file));
        BOOST_CHECK_EQUAL(heard.values.size(), 48000u);
        BOOST_CHECK(heard.increasing);
    }
}

BOOST_AUTO_TEST_SUITE_END()
