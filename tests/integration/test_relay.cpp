// Sources relayed into sinks (server/engine/relays.h): an RTP source
// with `sink = "out"` is heard in that sink's file as a playback stream of
// application rtp:NAME, whose volume, mute and sink audioctl changes like any
// stream's; loaded and unloaded at run time; and a sink whose clock runs
// 0.1 % fast is followed without a gap.
#include "helpers.h"

#include <boost/test/unit_test.hpp>

#include <cmath>
#include <csignal>

using namespace audiod;
using namespace audiod::test;
using namespace std::chrono_literals;

namespace {

// A server that sends RTP (L16) to itself: sink `net` sends, source `rx`
// receives; `source_extra` adds to the source's section, `sinks` adds sinks.
std::string loopback_config(uint16_t port, const std::string& source_extra,
                            const std::string& sinks) {
    return "[server]\nrt-priority = 0\n\n[sinks.main]\ntype = \"null\"\n\n" + sinks +
           "[sinks.net]\ntype = \"rtp\"\ndestination = \"127.0.0.1\"\nport = " +
           std::to_string(port) + "\npayload = \"l16\"\n\n[sources.rx]\ntype = \"rtp\"\n" +
           "address = \"127.0.0.1\"\nport = " + std::to_string(port) + "\npayload = \"l16\"\n" +
           source_extra;
}

std::string file_sink(const std::string& name, const std::string& path,
                      const std::string& extra = "") {
    return "[sinks." + name + "]\ntype = \"file\"\nformat = \"f32le\"\npath = \"" + path + "\"\n" +
           extra + "\n";
}

// Plays a one-second 1 kHz tone at 0.5 into the RTP sink and waits until it
// is played out.
void send_tone(const TempDir& dir, double seconds = 1.0) {
    const std::string tone = dir.file("tone-" + std::to_string(seconds) + ".wav");
    write_tone_wav(tone, 48000, 1000.0, seconds);
    const ProgramResult played = run_tool(
        "audioplay", {"--quiet", "--sink", "net", "--latency-ms", kExactPlayerMs, tone}, 120s);
    BOOST_REQUIRE_MESSAGE(played.status == 0, played.err);
}

// Waits until the source has gone idle (the tone's packets are all in) and
// the player has had time to hand its last frames on: its stream has played
// past where the file sink now stands.
void wait_until_heard(uint32_t stream) {
    BOOST_REQUIRE(eventually([] { return source_field("rx", "session") == "idle"; }, 30s));
    const auto position = stream_position(stream);
    BOOST_REQUIRE(position);
    BOOST_REQUIRE(wait_for_more(stream, 9600)); // 0.2 s more
}

HeardTone heard_in(const std::string& wav) {
    return hear_tone(read_wav_f32(wav), 2, 48000, 1000.0);
}

// For a failure's message: each 100 ms of a heard tone.
std::string windows_of(const std::string& wav, const HeardTone& heard) {
    return describe(
        measure_tone_windows(read_wav_f32(wav), 2, 48000, 1000.0, heard.first, heard.last + 1));
}

uint32_t player_stream() {
    uint64_t id = 0;
    eventually([&] { return (id = source_number("rx", "play-stream")) != 0; }, 30s);
    BOOST_REQUIRE_MESSAGE(id != 0, run_tool("audioctl", {"list", "sources"}).out);
    return static_cast<uint32_t>(id);
}

} // namespace

BOOST_AUTO_TEST_SUITE(relay)

BOOST_AUTO_TEST_CASE(an_rtp_source_plays_into_its_sink_as_a_stream_with_a_volume_and_a_sink) {
    TempDir dir;
    const uint16_t port = free_udp_port_pair();
    ServerProcess server(loopback_config(port, "sink = \"out\"\n",
                                         file_sink("out", dir.file("out.wav")) +
                                             file_sink("other", dir.file("other.wav"))));
    const uint32_t id = player_stream();
    BOOST_CHECK_EQUAL(stream_field(id, "app"), "rtp:rx");
    BOOST_CHECK_EQUAL(stream_field(id, "device"), "out");
    BOOST_CHECK_EQUAL(source_field("rx", "play-sink"), "out");

    // Heard in the sink's file: pitch, level, length, no gap.
    send_tone(dir);
    wait_until_heard(id);
    const HeardTone first = heard_in(dir.file("out.wav"));
    // Where the machine did not keep time, the receiver's concealment of
    // late packets lengthens the tone (a CI run beside a build: 1.103 s);
    // the same half second as the RTP receive tests allow, exact below.
    BOOST_CHECK_LE(std::fabs(first.seconds - 1.0), 0.5);
    if (rtp_receiver_kept_time({"out", "net"})) {
        BOOST_CHECK_LE(std::fabs(first.seconds - 1.0) * 1000, 5);
        BOOST_CHECK_LE(std::fabs(first.frequency - 1000.0), 0.5);
        BOOST_CHECK_LE(std::fabs(20 * std::log10(first.tone.amplitude / 0.5)), 0.1);
        BOOST_CHECK_LT(first.tone.thd_n_db, -60);
        BOOST_CHECK_LE(first.longest_quiet, 4u);
        // Clocks that agree (the system's, on both sides) are left alone.
        BOOST_CHECK_EQUAL(source_field("rx", "play-drift-ppm"), "0");
        BOOST_CHECK_EQUAL(source_number("rx", "play-resyncs"), 0u);
    }

    // Its application's volume applies; moved, it plays on the other sink.
    BOOST_REQUIRE_EQUAL(run_tool("audioctl", {"set-volume", "app:rtp:rx", "50%"}).status, 0);
    const ProgramResult move = run_tool("audioctl", {"move-stream", std::to_string(id), "other"});
    BOOST_REQUIRE_MESSAGE(move.status == 0,
                          "move-stream: "
                              << move.err << "streams:\n"
                              << run_tool("audioctl", {"list", "streams"}).out << "sources:\n"
                              << run_tool("audioctl", {"list", "sources"}).out << "server log:\n"
                              << server.log());
    BOOST_REQUIRE(eventually([&] { return stream_field(id, "device") == "other"; }, 10s));
    send_tone(dir);
    wait_until_heard(id);
    const HeardTone moved = heard_in(dir.file("other.wav"));
    BOOST_CHECK_LE(std::fabs(moved.seconds - 1.0), 0.5); // (as the first tone's)
    if (rtp_receiver_kept_time({"out", "other", "net"})) {
        BOOST_CHECK_LE(std::fabs(moved.seconds - 1.0) * 1000, 10);
        BOOST_CHECK_LE(std::fabs(20 * std::log10(moved.tone.amplitude / 0.25)), 0.1);
        BOOST_CHECK_LE(moved.longest_quiet, 4u);
        BOOST_CHECK_MESSAGE(moved.tone.thd_n_db < -60,
                            "THD+N " << moved.tone.thd_n_db << " dB after the move\n"
                                     << windows_of(dir.file("other.wav"), moved)
                                     << run_tool("audioctl", {"--json", "list", "sources"}).out
                                     << run_tool("audioctl", {"--json", "list", "sinks"}).out);
    }
    // ... and not on the first: its file holds the first tone only, as it
    // was heard before the move (however well the receiver kept time).
    BOOST_CHECK_LE(std::fabs(heard_in(dir.file("out.wav")).seconds - first.seconds) * 1000, 0.5);

    // Muted, nothing more is heard.
    BOOST_REQUIRE_EQUAL(run_tool("audioctl", {"mute", std::to_string(id), "on"}).status, 0);
    const size_t before = heard_in(dir.file("other.wav")).last;
    send_tone(dir);
    wait_until_heard(id);
    const std::vector<float> after = read_wav_f32(dir.file("other.wav"));
    float loudest = 0;
    for (size_t i = (before + 4800) * 2; i < after.size(); ++i) {
        loudest = std::max(loudest, std::fabs(after[i]));
    }
    BOOST_CHECK_LT(loudest, 1e-4);

    // The source's recording stays with its source: it is not the user's to move.
    const std::string record_id = std::to_string(id - 1);
    BOOST_CHECK_EQUAL(stream_field(id - 1, "app"), "rtp:rx");
    const ProgramResult refused = run_tool("audioctl", {"move-stream", record_id, "main.monitor"});
    BOOST_CHECK_EQUAL(refused.status, 1);
    BOOST_CHECK_MESSAGE(refused.err.find("move its playback stream") != std::string::npos,
                        refused.err);
    BOOST_CHECK_EQUAL(server.stop(SIGTERM), 0);
}

BOOST_AUTO_TEST_CASE(a_source_loaded_with_a_sink_plays_until_it_is_unloaded) {
    TempDir dir;
    const uint16_t port = free_udp_port_pair();
    ServerProcess server(loopback_config(port, "", file_sink("out", dir.file("out.wav"))));
    BOOST_CHECK_EQUAL(source_field("rx", "play-stream"), "");
    BOOST_REQUIRE_EQUAL(run_tool("audioctl", {"unload-source", "rx"}).status, 0);

    // A sink that does not exist is named, and nothing is left loaded.
    const ProgramResult bad =
        run_tool("audioctl", {"load-source", "rtp", "rx", "address=127.0.0.1",
                              "port=" + std::to_string(port), "payload=l16", "sink=nowhere"});
    BOOST_CHECK_EQUAL(bad.status, 1);
    BOOST_CHECK_MESSAGE(bad.err.find("no sink named 'nowhere'") != std::string::npos, bad.err);
    BOOST_CHECK_EQUAL(source_field("rx", "type"), "");

    const ProgramResult loaded =
        run_tool("audioctl",
                 {"load-source", "rtp", "rx", "address=127.0.0.1", "port=" + std::to_string(port),
                  "payload=l16", "sink=out", "play-latency-ms=40"});
    BOOST_REQUIRE_MESSAGE(loaded.status == 0, loaded.err);
    const uint32_t id = player_stream();
    BOOST_CHECK_EQUAL(source_number("rx", "play-target-ms"), 40u);
    send_tone(dir);
    wait_until_heard(id);
    const HeardTone heard = heard_in(dir.file("out.wav"));
    BOOST_CHECK_GE(heard.seconds, 0.5); // heard; exactly below, where time was kept
    if (rtp_receiver_kept_time({"out", "net"})) {
        BOOST_CHECK_LE(std::fabs(heard.seconds - 1.0) * 1000, 10);
        BOOST_CHECK_LE(heard.longest_quiet, 4u);
    }

    // Unloading the source closes both its streams.
    BOOST_REQUIRE_EQUAL(run_tool("audioctl", {"unload-source", "rx"}).status, 0);
    BOOST_CHECK(eventually([&] { return stream_field(id, "app").empty(); }, 10s));
    BOOST_CHECK_EQUAL(stream_field(id - 1, "app"), "");
    BOOST_CHECK_EQUAL(server.stop(SIGTERM), 0);
}

// The sink's timer runs at 48048 frames a second while the file says 48000:
// a sound card 0.1 % fast. The player learns the 0.1 % (a ratio near
// 0.999, so the tone moves towards 999 Hz in the file) and plays 20 s
// without a gap or a resync.
BOOST_AUTO_TEST_CASE(a_sink_on_a_faster_clock_is_followed_without_a_gap) {
    TempDir dir;
    const uint16_t port = free_udp_port_pair();
    ServerProcess server(loopback_config(
        port, "sink = \"out\"\n", file_sink("out", dir.file("out.wav"), "clock-ppm = 1000\n")));
    const uint32_t id = player_stream();
    send_tone(dir, 20.0);
    wait_until_heard(id);
    BOOST_TEST_MESSAGE(run_tool("audioctl", {"list", "sources"}).out);
    const std::vector<float> out = read_wav_f32(dir.file("out.wav"));
    const double expected_hz = 1000.0 * 48000 / 48048;
    const HeardTone heard = hear_tone(out, 2, 48000, expected_hz);
    // Heard, wherever the machine kept time or not; its length exactly
    // below, where it did. Where the receiver was held up, its queue ran
    // dry and started again from its target (a gap inside the tone), or
    // overfilled and dropped back to it (the tone shorter), so a machine
    // loaded enough changes the length without a bound of ours: CI beside
    // its own sanitizer build heard it 0.78 s longer once and 0.92 s
    // shorter another time.
    BOOST_CHECK_GE(heard.seconds, 1.0);
    if (!rtp_receiver_kept_time({"out", "net"})) {
        BOOST_CHECK_EQUAL(server.stop(SIGTERM), 0);
        return;
    }
    BOOST_CHECK_LE(heard.longest_quiet, 4u);
    BOOST_CHECK_LE(std::fabs(heard.seconds - 20.02), 0.02);
    // The loop is still closing in after 20 s (it is tuned slow, 30 s, and
    // acts only outside its dead band, so the ratio swings around -1000
    // ppm as it learns), but the queue has stayed where the loop holds it.
    // That is not the target exactly: the queue is read to within a cycle
    // of the source and one of the sink (256 frames each here), so the
    // warm-up may settle it up to those two cycles from the target, and
    // the loop then leaves alone whatever lies within a cycle of that (its
    // dead band). An unfollowed 0.1 % would have moved it 20 ms by now.
    // A loop that started over (its sink cycle held up, which a busy
    // machine does without an xrun) learns again from what it kept, and is
    // judged by the queue alone. (A full suite run read -259 ppm once, with
    // no xrun; play-restarts says from now on whether this was why.)
    const double ppm = std::stod(source_field("rx", "play-drift-ppm"));
    if (source_number("rx", "play-restarts") == 0) {
        BOOST_CHECK_LT(ppm, -300);
    } else {
        BOOST_TEST_MESSAGE("the clock loop started over: its correction ("
                           << ppm << " ppm) is not judged");
    }
    BOOST_CHECK_GT(ppm, -1700);
    const double cycle_ms = 256 * 1000.0 / 48000;
    const double queue_ms = std::stod(source_field("rx", "play-queue-ms"));
    BOOST_CHECK_LE(std::fabs(queue_ms - source_number("rx", "play-target-ms")), 3 * cycle_ms + 1);
    BOOST_CHECK_EQUAL(source_number("rx", "play-resyncs"), 0u);
    // Clean throughout, in windows that each find their own pitch (it
    // moves from 1000 Hz to 999 Hz as the loop learns the sink's clock).
    const TrackedTone tracked =
        track_tone(out, 2, 48000, expected_hz, heard.first + 4800, heard.last - 4800);
    BOOST_TEST_MESSAGE("THD+N " << tracked.thd_n_db << " dB, worst 100 ms "
                                << tracked.worst_window_db << " dB");
    BOOST_CHECK_LT(tracked.thd_n_db, -50);
    BOOST_CHECK_LT(tracked.worst_window_db, -40);
    BOOST_CHECK_EQUAL(server.stop(SIGTERM), 0);
}

BOOST_AUTO_TEST_SUITE_END()
