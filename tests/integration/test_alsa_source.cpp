// The alsa source through the real snd_pcm_* capture path, on the test
// sound card (which "hears" the sequence signal): what a recording gets,
// recovery from overruns and suspends, and a device unplugged and back.
#include "fixtures/fixture_signals.h"
#include "helpers.h"

#include <boost/test/unit_test.hpp>

#include <csignal>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <thread>

using namespace audiod;
using namespace audiod::test;
using namespace std::chrono_literals;

namespace {

// A server with a file sink "out" and the test card as source "mic". A
// generous device buffer (16 quanta) keeps scheduling noise from overruns.
struct MicServer {
    explicit MicServer(const TempDir& dir) {
        card = use_test_card(dir);
        server = std::make_unique<ServerProcess>(
            "[server]\nrt-priority = 20\n\n[sinks.out]\ntype = \"file\"\npath = \"" +
            dir.file("out.wav") +
            "\"\n\n[sources.mic]\ntype = \"alsa\"\ndevice = \"testcard\"\nperiods = 16\n");
    }
    void fault(const char* name) const { std::ofstream(card + "/" + name) << "x\n"; }
    void clear(const char* name) const { ::unlink((card + "/" + name).c_str()); }

    std::string card;
    std::unique_ptr<ServerProcess> server;
};

// The frames of a recording that carry the sequence, and how many jumps
// (frames lost between two heard ones) it has.
struct Continuity {
    size_t frames = 0;
    size_t jumps = 0;
    bool increasing = true;
};

Continuity continuity(const Heard& heard) {
    Continuity c;
    c.frames = heard.values.size();
    c.increasing = heard.increasing;
    c.jumps = sequence_jumps(heard);
    return c;
}

} // namespace

BOOST_AUTO_TEST_SUITE(alsa_source)

BOOST_AUTO_TEST_CASE(a_recording_gets_every_frame_the_device_captured) {
    TempDir dir;
    MicServer mic(dir);
    const ProgramResult sources = run_tool("audioctl", {"--json", "list", "sources"});
    BOOST_CHECK_MESSAGE(
        sources.out.find("{\"kind\":\"source\",\"name\":\"mic\",\"type\":\"alsa\"") !=
            std::string::npos,
        sources.out);
    // Two recordings at once, one converted: both hear the card.
    BackgroundProgram other({bin("audiorec"), "--quiet", "--source", "mic", "--latency-ms",
                             kExactRecorderMs, "--format", "f32le", "--rate", "44100", "--channels",
                             "1", "--duration", "2", dir.file("mono.wav")});
    const ExactRecording r = record_exactly("mic", 3, dir.file("mic.wav"));
    BOOST_REQUIRE_EQUAL(other.finish(30s).status, 0);
    const Continuity c = continuity(hear_sequence(dir.file("mic.wav")));
    BOOST_CHECK_EQUAL(c.frames, 3u * 48000);
    BOOST_CHECK(c.increasing);
    BOOST_CHECK_MESSAGE(c.jumps == 0 || r.overruns > 0, c.jumps << " jumps");
    if (r.overruns > 0) {
        BOOST_TEST_MESSAGE("the recorder overran in each of " << r.attempts
                                                              << " recordings: gaps not judged");
    }
    BOOST_REQUIRE_EQUAL(mic.server->stop(SIGTERM), 0);
}

BOOST_AUTO_TEST_CASE(overruns_and_suspends_are_recovered_and_recording_goes_on) {
    TempDir dir;
    MicServer mic(dir);
    Recording rec(dir.file("mic.wav"), {"--quiet", "--source", "mic"});
    const auto id = rec.id();
    const auto xruns = [] {
        const std::string json = run_tool("audioctl", {"--json", "list", "sources"}).out;
        const auto at = json.find("\"name\":\"mic\"");
        return at == std::string::npos ? 0 : json_number(json.substr(at), "xruns").value_or(0);
    };
    BOOST_REQUIRE(wait_for_position(id, 48000));
    mic.fault("xrun");
    BOOST_CHECK(eventually([&] { return xruns() >= 1; }, 20s));
    BOOST_REQUIRE(wait_for_more(id, 48000));
    // The card stays suspended until the source has seen it.
    const uint64_t before_suspend = xruns();
    mic.fault("suspend");
    BOOST_CHECK(eventually([&] { return xruns() > before_suspend; }, 20s));
    mic.clear("suspend");
    BOOST_REQUIRE(wait_for_more(id, 48000));
    // Both counted as the source's xruns, with its latency, in list sources.
    const std::string json = run_tool("audioctl", {"--json", "list", "sources"}).out;
    const auto at = json.find("\"name\":\"mic\"");
    BOOST_REQUIRE(at != std::string::npos);
    BOOST_CHECK_GE(json_number(json.substr(at), "xruns").value_or(0), 2u);
    BOOST_CHECK_GT(json_number(json.substr(at), "latency_frames").value_or(0), 0u);
    const ProgramResult r = rec.stop();
    BOOST_REQUIRE_MESSAGE(r.status == 0, r.err);
    BOOST_REQUIRE_EQUAL(mic.server->stop(SIGTERM), 0);
    // The sequence goes on after each fault (lost frames are a jump, never
    // a repeat or a reordering), and at most a second of it is missing.
    const size_t recorded = read_wav_s16(dir.file("mic.wav")).size() / 2;
    const Continuity c = continuity(hear_sequence(dir.file("mic.wav")));
    BOOST_TEST_MESSAGE(c.frames << " of " << recorded << " frames, " << c.jumps << " jumps");
    BOOST_CHECK(c.increasing);
    BOOST_CHECK_GT(c.frames + 48000, recorded);
    BOOST_CHECK_LE(c.jumps, 4u);
}

BOOST_AUTO_TEST_CASE(an_unplugged_source_hands_its_recordings_over_and_takes_them_back) {
    TempDir dir;
    MicServer mic(dir);
    Recording rec(dir.file("mic.wav"), {"--quiet", "--source", "mic"});
    const auto id = rec.id();
    BOOST_REQUIRE(wait_for_position(id, 48000));
    mic.fault("unplug");
    // The source fails: the recording moves to the default sink's monitor.
    BOOST_CHECK(eventually([&] { return stream_field(id, "device") == "out.monitor"; }, 20s));
    const ProgramResult sources = run_tool("audioctl", {"list", "sources"});
    BOOST_CHECK_MESSAGE(sources.out.find("failed") != std::string::npos, sources.out);
    BOOST_REQUIRE(wait_for_more(id, 48000));
    mic.clear("unplug");
    // The device is back: the source reopens and the recording returns.
    BOOST_CHECK(eventually([&] { return stream_field(id, "device") == "mic"; }, 20s));
    BOOST_REQUIRE(wait_for_more(id, 120000));
    const ProgramResult r = rec.stop();
    BOOST_REQUIRE_MESSAGE(r.status == 0, r.err);
    BOOST_REQUIRE_EQUAL(mic.server->stop(SIGTERM), 0);
    // The reopened card starts its sequence again, so only the amount is
    // checked: the card before (1 s) and after (2.5 s), the default sink's
    // silence between.
    const Continuity c = continuity(hear_sequence(dir.file("mic.wav")));
    BOOST_CHECK_GT(c.frames, 3u * 48000);
}

BOOST_AUTO_TEST_CASE(a_source_that_cannot_open_is_refused_clearly) {
    TempDir dir;
    const std::string config = "[server]\nrt-priority = 0\n[sinks.out]\ntype = \"null\"\n"
                               "[sources.mic]\ntype = \"alsa\"\ndevice = \"no-such-device\"\n";
    std::ofstream(dir.file("bad.conf")) << config;
    // A socket of its own: $AUDIOD_SOCKET still names the directory of the
    // case before, which is gone (the server made it again and left its
    // lock file there), or, run alone, the user's own server.
    const ProgramResult r =
        run_tool("audiod", {"--socket", dir.file("socket"), "--config", dir.file("bad.conf"),
                            "--state", dir.file("state")});
    BOOST_CHECK_NE(r.status, 0);
    BOOST_CHECK_MESSAGE(r.err.find("source 'mic'") != std::string::npos &&
                            r.err.find("no-such-device") != std::string::npos,
                        r.err);
    // A module without a source says so.
    std::ofstream(dir.file("null.conf")) << "[server]\nrt-priority = 0\n[sinks.out]\ntype = "
                                            "\"null\"\n[sources.s]\ntype = \"null\"\n";
    const ProgramResult n =
        run_tool("audiod", {"--socket", dir.file("socket"), "--config", dir.file("null.conf"),
                            "--state", dir.file("state")});
    BOOST_CHECK_NE(n.status, 0);
    BOOST_CHECK_MESSAGE(n.err.find("provides no source") != std::string::npos, n.err);
}

BOOST_AUTO_TEST_SUITE_END()
