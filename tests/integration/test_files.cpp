// Audio files users have, through the real tools: audioplay plays a FLAC, an
// Ogg Opus and an MP3 made by ffmpeg (what reaches the sink is checked:
// bit-exact for FLAC, the tone's pitch, level and length for the lossy two),
// and audiorec and the file sink write FLAC; the file sink's clock runs at
// the error it is set to, and its play-times file says when each frame played.
#include "helpers.h"
#include "support/tone_analysis.h"

#include <boost/test/unit_test.hpp>

#include <algorithm>
#include <cmath>
#include <csignal>
#include <sstream>
#include <utility>
#include <vector>

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

BOOST_AUTO_TEST_CASE(the_file_sink_tells_when_its_frames_play_on_a_clock_set_fast) {
    TempDir dir;
    ServerProcess server(
        file_sink_config(dir.file("out.wav"), 480,
                         "clock-ppm = 2000\nplay-times = \"" + dir.file("out.times") + "\"\n"));
    const ProgramResult played =
        run_tool("audiod-test-client", {"--signal", "sequence", "--frames", "96000"}, 60s);
    BOOST_REQUIRE_MESSAGE(played.status == 0, played.err);
    BOOST_REQUIRE_EQUAL(server.stop(SIGTERM), 0);
    const size_t frames = read_wav_s16(dir.file("out.wav")).size() / 2;
    std::istringstream lines(file_contents(dir.file("out.times")));
    std::string header;
    std::getline(lines, header);
    BOOST_CHECK_EQUAL(header, "# frame monotonic-raw-ns");
    std::vector<std::pair<uint64_t, int64_t>> marks;
    uint64_t frame = 0;
    int64_t ns = 0;
    while (lines >> frame >> ns) {
        marks.emplace_back(frame, ns);
    }
    // The sink played about 2 s: a mark every tenth of a second, from the
    // file's first frame, each for a frame the file holds, in order.
    BOOST_REQUIRE_GE(marks.size(), 15u);
    BOOST_CHECK_EQUAL(marks.front().first, 0u);
    BOOST_CHECK_LT(marks.back().first, frames);
    std::vector<double> rates;
    for (size_t i = 1; i < marks.size(); ++i) {
        BOOST_CHECK_GT(marks[i].first, marks[i - 1].first);
        BOOST_CHECK_GT(marks[i].second, marks[i - 1].second);
        // Between regular marks the sink played at its clock's rate: 48000
        // × 1.002 frames a second (a mark after a late cycle starts anew).
        if (marks[i].first - marks[i - 1].first == 4800) {
            rates.push_back(4800 * 1e9 /
                            static_cast<double>(marks[i].second - marks[i - 1].second));
        }
    }
    BOOST_REQUIRE_GE(rates.size(), 5u);
    std::nth_element(rates.begin(), rates.begin() + static_cast<ptrdiff_t>(rates.size() / 2),
                     rates.end());
    // CLOCK_MONOTONIC, which the timer sleeps on, may be slewed by NTP
    // against the raw clock; 20 frames a second (400 ppm) covers that.
    BOOST_CHECK_CLOSE(rates[rates.size() / 2], 48096.0, 20.0 / 48096 * 100);
}

BOOST_AUTO_TEST_SUITE_END()
