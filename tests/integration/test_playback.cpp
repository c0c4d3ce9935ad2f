// End to end with real processes: clients play known signals into a file
// sink, and the WAV that comes out is checked sample for sample.
#include "common/audio_file.h"
#include "fixtures/fixture_signals.h"
#include "helpers.h"

#include <boost/test/unit_test.hpp>

#include <algorithm>
#include <csignal>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <sched.h>
#include <sstream>
#include <thread>
#include <unistd.h>

using namespace audiod;
using namespace audiod::test;
using namespace std::chrono_literals;

namespace {

constexpr uint32_t kChannels = 2;

ProgramResult play(const std::vector<std::string>& args) {
    return run_tool("audiod-test-client", args, 60s);
}

void check_client_ok(const ProgramResult& r) {
    BOOST_REQUIRE_MESSAGE(r.status == 0, "client failed: " << r.err);
}

// Checks that the frames of a counter stream appear in `out` exactly once,
// in order, with nothing else mixed in; silence may separate them (a pause).
void check_counter_continuity(const std::vector<int16_t>& out, uint64_t frames) {
    uint64_t next = 0;
    for (size_t f = 0; f < out.size() / kChannels; ++f) {
        const int16_t left = out[f * kChannels];
        const int16_t right = out[f * kChannels + 1];
        BOOST_REQUIRE_EQUAL(left, right);
        if (left == 0) {
            continue;
        }
        BOOST_REQUIRE_MESSAGE(next < frames, "extra sound at frame " << f);
        BOOST_REQUIRE_MESSAGE(left == counter_value(next), "frame " << f << ": got " << left
                                                                    << ", expected counter "
                                                                    << counter_value(next));
        ++next;
    }
    BOOST_CHECK_EQUAL(next, frames);
}

} // namespace

BOOST_AUTO_TEST_SUITE(playback)

BOOST_AUTO_TEST_CASE(two_clients_mix_sample_for_sample) {
    TempDir dir;
    const std::string wav = dir.file("out.wav");
    ServerProcess server(file_sink_config(wav));
    // One s16 client and one f32 client, different lengths, started apart.
    BackgroundProgram a({bin("audiod-test-client"), "--signal", "random", "--seed", "11",
                         "--frames", "48000", "--app", "alpha"});
    BOOST_REQUIRE(wait_for_app_stream("alpha"));
    BackgroundProgram b({bin("audiod-test-client"), "--signal", "random", "--seed", "22",
                         "--frames", "72000", "--format", "f32le", "--app", "beta"});
    const ProgramResult ra = a.finish(60s);
    const ProgramResult rb = b.finish(60s);
    check_client_ok(ra);
    check_client_ok(rb);
    BOOST_REQUIRE_EQUAL(server.stop(SIGTERM), 0);

    const auto start_a = json_number(ra.out, "start");
    const auto start_b = json_number(rb.out, "start");
    BOOST_REQUIRE(start_a && start_b);
    BOOST_CHECK_EQUAL(json_number(ra.out, "underruns").value_or(99), 0u);
    BOOST_CHECK_EQUAL(json_number(rb.out, "underruns").value_or(99), 0u);

    const auto out = read_wav_s16(wav);
    const auto x = make_signal("random", 48000, kChannels, 11, 0);
    const auto y = make_signal("random", 72000, kChannels, 22, 0);
    BOOST_REQUIRE_GE(out.size(), (*start_b + 72000) * kChannels);
    BOOST_REQUIRE_GE(out.size(), (*start_a + 48000) * kChannels);
    std::vector<int32_t> expected(out.size(), 0);
    for (size_t i = 0; i < x.size(); ++i) {
        expected[*start_a * kChannels + i] += x[i];
    }
    for (size_t i = 0; i < y.size(); ++i) {
        expected[*start_b * kChannels + i] += y[i];
    }
    size_t mismatches = 0;
    for (size_t i = 0; i < out.size(); ++i) {
        const int32_t want = std::clamp(expected[i], -32768, 32767);
        if (out[i] != want && mismatches++ < 5) {
            BOOST_ERROR("sample " << i << ": got " << out[i] << ", expected " << want);
        }
    }
    BOOST_CHECK_EQUAL(mismatches, 0u);
}

BOOST_AUTO_TEST_CASE(client_with_garbage_positions_is_dropped_others_continue) {
    TempDir dir;
    const std::string wav = dir.file("out.wav");
    ServerProcess server(file_sink_config(wav));
    // Plays until the evil client has come and gone.
    PlayingClient good({"--signal", "counter", "--app", "good"});
    const auto id = wait_for_app_stream("good");
    BOOST_REQUIRE(id);
    BOOST_REQUIRE(wait_for_position(*id, 4800));
    const ProgramResult evil = run_tool("audiod-evil-client", {"garbage-positions"});
    BOOST_CHECK_MESSAGE(evil.status == 0, evil.err);
    BOOST_REQUIRE(wait_for_more(*id, 12000));
    const ProgramResult r = good.stop_without_underruns();
    // The server still serves.
    BOOST_CHECK_EQUAL(run_tool("audioctl", {"info"}).status, 0);
    BOOST_REQUIRE_EQUAL(server.stop(SIGTERM), 0);
    BOOST_CHECK(server.log().find("corrupted its ring positions") != std::string::npos);
    check_counter_continuity(read_wav_s16(wav), json_number(r.out, "written").value_or(0));
}

BOOST_AUTO_TEST_CASE(a_greedy_client_is_refused_shared_memory_while_others_play_on) {
    TempDir dir;
    ServerProcess server(file_sink_config(dir.file("out.wav")));
    PlayingClient modest({"--app", "modest"});
    const auto id = wait_for_app_stream("modest");
    BOOST_REQUIRE(id);
    // Streams of 10 s at 192 kHz, 8 channels, f32: 61 MB each, so the
    // default 64 MB allows one.
    const ProgramResult greedy = run_program({bin("audiod-evil-client"), "greedy"}, 60s);
    BOOST_CHECK_MESSAGE(greedy.status == 0, greedy.out << greedy.err);
    BOOST_CHECK_MESSAGE(greedy.out.find("created 1; refused: a stream of 59 MB would take this "
                                        "client past its shared-memory limit (59 MB in use of 64 "
                                        "MB; [server] client-memory-mb)") != std::string::npos,
                        greedy.out);
    BOOST_REQUIRE(wait_for_more(*id, 24000));
    BOOST_CHECK_EQUAL(modest.stop().status, 0);
}

BOOST_AUTO_TEST_CASE(malformed_requests_drop_only_that_client) {
    TempDir dir;
    ServerProcess server(file_sink_config(dir.file("out.wav")));
    PlayingClient good({"--signal", "counter", "--app", "good"});
    const auto id = wait_for_app_stream("good");
    BOOST_REQUIRE(id);
    for (const char* mode : {"garbage-message", "no-hello"}) {
        const ProgramResult evil = run_tool("audiod-evil-client", {mode});
        BOOST_CHECK_MESSAGE(evil.status == 0, mode << ": " << evil.err);
    }
    BOOST_REQUIRE(wait_for_more(*id, 4800));
    const ProgramResult r = good.stop();
    check_client_ok(r);
    BOOST_CHECK_EQUAL(server.stop(SIGTERM), 0);
    check_counter_continuity(read_wav_s16(dir.file("out.wav")),
                             json_number(r.out, "written").value_or(0));
}

// A client of another protocol version gets an error that names both
// versions, and the connection ends, before anything else happens.
BOOST_AUTO_TEST_CASE(a_client_of_another_protocol_version_is_told_so) {
    TempDir dir;
    ServerProcess server(file_sink_config(dir.file("out.wav")));
    const ProgramResult old = run_tool("audiod-evil-client", {"old-version"});
    BOOST_CHECK_MESSAGE(old.status == 0, old.out << old.err);
    BOOST_CHECK_MESSAGE(old.out.find("refused: protocol version 4 is not supported (this server "
                                     "speaks 6)") != std::string::npos,
                        old.out);
    BOOST_CHECK_EQUAL(run_tool("audioctl", {"info"}).status, 0); // and serves the next
}

BOOST_AUTO_TEST_CASE(pause_and_resume_lose_and_alter_nothing) {
    TempDir dir;
    const std::string wav = dir.file("out.wav");
    ServerProcess server(file_sink_config(wav));
    const ProgramResult r = play({"--signal", "counter", "--frames", "72000", "--latency-ms", "200",
                                  "--pause-at", "30000", "--pause-ms", "400"});
    check_client_ok(r);
    BOOST_REQUIRE_EQUAL(server.stop(SIGTERM), 0);
    const auto out = read_wav_s16(wav);
    check_counter_continuity(out, 72000);
    // The server held the stream while paused: with the pause ignored, the
    // 200 ms ring would have run dry while the client slept, an underrun.
    BOOST_CHECK_EQUAL(json_number(r.out, "underruns").value_or(1), 0u);
    // The pause shows as a stretch of silence inside the stream: the 400 ms
    // of the pause, less what the file sink skips when a cycle of its comes
    // late (it starts its timeline again, as a card does; on a loaded CI
    // machine it once skipped 176 ms of the pause).
    const auto start = first_sound(out, kChannels);
    BOOST_REQUIRE(start);
    size_t longest_gap = 0;
    size_t gap = 0;
    for (size_t f = *start; f < out.size() / kChannels; ++f) {
        gap = out[f * kChannels] == 0 ? gap + 1 : 0;
        longest_gap = std::max(longest_gap, gap);
    }
    BOOST_CHECK_GE(longest_gap, 48000u * 100 / 1000);
}

// A flush (a player's seek) drops what was queued when it was asked for,
// and nothing written after it: the sink hears the sequence from 0 to where
// the server had got, then from the flush on to the end, each frame once.
// The client fills a two-second ring and flushes once a second has played,
// so two seconds are queued, and something still is unless it is held up
// for two seconds (with a 200 ms ring, a loaded stress pass found it all
// played, and nothing to drop).
BOOST_AUTO_TEST_CASE(a_flush_drops_what_was_queued_and_nothing_written_after) {
    TempDir dir;
    const std::string wav = dir.file("out.wav");
    ServerProcess server(file_sink_config(wav));
    constexpr uint64_t kFrames = 192000;
    constexpr uint64_t kFlushAt = 144000;
    const ProgramResult r = play({"--signal", "sequence", "--frames", std::to_string(kFrames),
                                  "--latency-ms", "2000", "--flush-at", std::to_string(kFlushAt)});
    check_client_ok(r);
    BOOST_REQUIRE_EQUAL(server.stop(SIGTERM), 0);
    const std::vector<uint64_t> heard = hear_sequence(wav).values;
    BOOST_REQUIRE(!heard.empty());
    BOOST_CHECK_EQUAL(heard.front(), 0u);
    BOOST_CHECK_EQUAL(heard.back(), kFrames - 1);
    BOOST_REQUIRE(only_increasing(heard));
    // One jump, to exactly the flush point.
    const auto jump = std::adjacent_find(heard.begin(), heard.end(),
                                         [](uint64_t a, uint64_t b) { return b != a + 1; });
    BOOST_REQUIRE_MESSAGE(jump != heard.end(), "nothing was dropped");
    BOOST_CHECK_EQUAL(*(jump + 1), kFlushAt);
    BOOST_CHECK(std::adjacent_find(jump + 1, heard.end(), [](uint64_t a, uint64_t b) {
                    return b != a + 1;
                }) == heard.end());
    // What was dropped had been queued: at most what the client had written
    // and the server not yet taken when it asked.
    const uint64_t dropped = kFlushAt - *jump - 1;
    const uint64_t queued = json_number(r.out, "queued_at_flush").value_or(0);
    BOOST_TEST_MESSAGE("flush: " << queued << " frames queued, " << dropped << " dropped");
    BOOST_CHECK_LE(dropped, queued);
}

BOOST_AUTO_TEST_CASE(audioplay_plays_a_wav_file_bit_exact_in_real_time) {
    TempDir dir;
    const std::string wav = dir.file("out.wav");
    const std::string input = dir.file("in.wav");
    const auto signal = make_signal("random", 48000, kChannels, 5, 0);
    {
        auto writer =
            AudioFileWriter::create(input, {SampleFormat::s16le, 48000, kChannels}, Container::wav);
        BOOST_REQUIRE(std::holds_alternative<AudioFileWriter>(writer));
        auto& w = std::get<AudioFileWriter>(writer);
        std::vector<int16_t> data = signal;
        data[0] = 1234; // a known first frame to find the start by
        data[1] = 1234;
        BOOST_REQUIRE_EQUAL(w.append(data.data(), data.size() * 2), 0);
        BOOST_REQUIRE_EQUAL(w.finish(), 0);
    }
    ServerProcess server(file_sink_config(wav));
    const ProgramResult r =
        run_tool("audioplay", {"--quiet", "--latency-ms", kExactPlayerMs, input}, 60s);
    BOOST_REQUIRE_MESSAGE(r.status == 0, r.err);
    // One second of audio cannot have been played out in much less.
    BOOST_CHECK_GE(r.seconds, 0.9);
    BOOST_REQUIRE_EQUAL(server.stop(SIGTERM), 0);
    const auto out = read_wav_s16(wav);
    const auto start = first_sound(out, kChannels);
    BOOST_REQUIRE(start);
    BOOST_REQUIRE_GE(out.size(), (*start + 48000) * kChannels);
    BOOST_CHECK_EQUAL(out[*start * kChannels], 1234);
    BOOST_CHECK(std::equal(signal.begin() + 2, signal.end(),
                           out.begin() + static_cast<ptrdiff_t>(*start * kChannels + 2)));
}

// audioplay --realtime feeds its stream from a SCHED_FIFO thread where the
// system permits it (the suite runs as root in CI), and says it plays on at
// normal priority where it does not.
BOOST_AUTO_TEST_CASE(audioplay_realtime_feeds_its_stream_from_a_sched_fifo_thread) {
    TempDir dir;
    ServerProcess server(file_sink_config(dir.file("out.wav")));
    BackgroundProgram player({bin("audioplay"), "--realtime", "--tone", "1000", "--duration", "2"});
    BOOST_REQUIRE(wait_for_playing("audioplay"));
    // Each thread's policy and RT priority: /proc/PID/task/TID/stat fields
    // 41 and 40, counted after the parenthesised name.
    std::vector<std::pair<int, int>> threads;
    for (const auto& task :
         std::filesystem::directory_iterator("/proc/" + std::to_string(player.pid()) + "/task")) {
        std::ifstream in(task.path() / "stat");
        std::string stat((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
        std::istringstream fields(stat.substr(stat.rfind(')') + 2));
        std::vector<std::string> values{std::istream_iterator<std::string>(fields),
                                        std::istream_iterator<std::string>()};
        if (values.size() > 38) {
            threads.emplace_back(std::stoi(values[38]), std::stoi(values[37]));
        }
    }
    const ProgramResult r = player.finish(30s);
    BOOST_REQUIRE_MESSAGE(r.status == 0, r.err);
    const bool fifo_15 = std::find(threads.begin(), threads.end(),
                                   std::pair<int, int>{SCHED_FIFO, 15}) != threads.end();
    if (::geteuid() == 0) {
        BOOST_CHECK_MESSAGE(fifo_15, "no SCHED_FIFO 15 thread among " << threads.size());
        BOOST_CHECK_MESSAGE(r.err.find("real-time (SCHED_FIFO) priority 15") != std::string::npos,
                            r.err);
    } else {
        BOOST_CHECK_MESSAGE(fifo_15 || r.err.find("refused") != std::string::npos, r.err);
    }
}

BOOST_AUTO_TEST_CASE(audioplay_reads_raw_audio_from_stdin_pipe) {
    TempDir dir;
    const std::string wav = dir.file("out.wav");
    ServerProcess server(file_sink_config(wav));
    // A shell pipeline: raw counter frames from a file through a pipe.
    const auto signal = make_signal("counter", 24000, kChannels, 0, 0);
    {
        std::FILE* f = std::fopen(dir.file("raw").c_str(), "wb");
        std::fwrite(signal.data(), 2, signal.size(), f);
        std::fclose(f);
    }
    const ProgramResult r =
        run_program({"/bin/sh", "-c",
                     "cat '" + dir.file("raw") + "' | '" + bin("audioplay") +
                         "' --quiet --raw --format s16le --rate 48000 --channels 2 -"},
                    60s);
    BOOST_REQUIRE_MESSAGE(r.status == 0, r.err);
    BOOST_REQUIRE_EQUAL(server.stop(SIGTERM), 0);
    check_counter_continuity(read_wav_s16(wav), 24000);
}

BOOST_AUTO_TEST_CASE(unsupported_formats_are_refused_with_a_reason) {
    TempDir dir;
    ServerProcess server(file_sink_config(dir.file("out.wav")));
    ProgramResult r = play({"--rate", "4000", "--frames", "100"});
    BOOST_CHECK_EQUAL(r.status, 1);
    BOOST_CHECK_MESSAGE(r.err.find("rate 4000 Hz is outside 8000..192000 Hz") != std::string::npos,
                        r.err);
    r = play({"--rate", "384000", "--frames", "100"});
    BOOST_CHECK_EQUAL(r.status, 1);
    r = play({"--channels", "9", "--frames", "100"});
    BOOST_CHECK_EQUAL(r.status, 1);
    BOOST_CHECK_MESSAGE(r.err.find("9 channels: between 1 and 8") != std::string::npos, r.err);
    r = play({"--sink", "nowhere", "--frames", "100"});
    BOOST_CHECK_EQUAL(r.status, 1);
    BOOST_CHECK_MESSAGE(r.err.find("no sink named 'nowhere'") != std::string::npos, r.err);
}

BOOST_AUTO_TEST_SUITE_END()
