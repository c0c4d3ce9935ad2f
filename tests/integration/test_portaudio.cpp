// The portaudio sink and source through PortAudio's real ALSA host API, on
// the test sound card (tests/fixtures/fake_card, which PortAudio lists as
// "testcard"): what they play and record, a device that is unplugged and
// comes back, how a device is named and refused, and `audiod
// --list-devices`.
#include "dummy_jack.h"
#include "fixtures/fixture_signals.h"
#include "helpers.h"

#include <boost/test/unit_test.hpp>

#include <algorithm>
#include <cmath>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <set>
#include <sstream>
#include <vector>

using namespace audiod;
using namespace audiod::test;
using namespace std::chrono_literals;

namespace {

// A server whose "card" sink is the test card reached through PortAudio,
// with a file sink "spare" beside it. 85 ms of device buffer keeps this
// machine's scheduling from causing xruns of its own.
// `extra`: more of the sink's options (process = "own": a helper process).
struct PortAudioServer {
    explicit PortAudioServer(const TempDir& dir, const std::string& extra = "") {
        card = use_test_card(dir);
        server = std::make_unique<ServerProcess>(
            "[server]\nrt-priority = 20\ndefault-sink = \"card\"\n\n[sinks.card]\ntype = "
            "\"portaudio\"\ndevice = \"testcard\"\nlatency-ms = 85\n" +
            extra + "\n[sinks.spare]\ntype = \"file\"\npath = \"" + dir.file("spare.wav") + "\"\n");
    }

    std::string card;
    std::unique_ptr<ServerProcess> server;
};

// The sequence frames the card played, from its s32 recording (the sink
// hands PortAudio s32, and the card takes it as it is): frames whose low 16
// bits are not zero are not s16 material played bit-exact, and are counted.
struct Played {
    std::vector<uint64_t> frames;
    size_t inexact = 0;
};

Played played_s32(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    const std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    std::vector<int32_t> samples(bytes.size() / 4);
    std::memcpy(samples.data(), bytes.data(), samples.size() * 4);
    Played played;
    for (size_t i = 0; i + 1 < samples.size(); i += 2) {
        if (samples[i] == 0 && samples[i + 1] == 0) {
            continue;
        }
        if ((samples[i] & 0xffff) != 0 || (samples[i + 1] & 0xffff) != 0) {
            ++played.inexact;
        }
        played.frames.push_back(sequence_number(static_cast<int16_t>(samples[i] >> 16),
                                                static_cast<int16_t>(samples[i + 1] >> 16)));
    }
    return played;
}

// A server recording from the test card through PortAudio: source "mic",
// with a file sink "out" whose monitor takes recordings while it is gone.
struct PortAudioMicServer {
    explicit PortAudioMicServer(const TempDir& dir, const std::string& extra = "") {
        card = use_test_card(dir);
        server = std::make_unique<ServerProcess>(
            "[server]\nrt-priority = 20\n\n[sinks.out]\ntype = \"file\"\npath = \"" +
            dir.file("out.wav") +
            "\"\n\n[sources.mic]\ntype = \"portaudio\"\ndevice = \"testcard\"\nlatency-ms = "
            "85\n" +
            extra);
    }

    std::string card;
    std::unique_ptr<ServerProcess> server;
};

} // namespace

BOOST_AUTO_TEST_SUITE(portaudio)

// Plays 2 s of the sequence into the card through the sink, in the server
// or (`own`) in a helper process, whose ring adds two quanta of latency.
void plays_bit_exact(bool own) {
    TempDir dir;
    PortAudioServer card(dir, own ? "process = \"own\"\n" : "");
    BOOST_CHECK_EQUAL(sink_field("card", "type"), "portaudio");
    const ProgramResult r =
        run_tool("audiod-test-client", {"--signal", "sequence", "--frames", "96000"}, 60s);
    BOOST_REQUIRE_MESSAGE(r.status == 0, r.err);
    const std::string listed = run_tool("audioctl", {"list", "sinks"}).out;
    BOOST_TEST_MESSAGE(listed);
    // What PortAudio made of the device: its host API, name and latency.
    BOOST_CHECK(listed.find("host-api=alsa device=testcard pa-latency-ms=") != std::string::npos);
    BOOST_CHECK_EQUAL(!sink_field("card", "helper-pid").empty(), own);
    // It keeps what was asked for queued: 85 ms, rounded up to 16 quanta.
    BOOST_CHECK_EQUAL(sink_field("card", "latency_frames"), std::to_string((own ? 18 : 16) * 256));
    const std::string xruns = sink_field("card", "xruns");
    BOOST_REQUIRE_EQUAL(card.server->stop(SIGTERM), 0);
    const Played played = played_s32(card.card + "/played.raw");
    BOOST_CHECK_EQUAL(played.inexact, 0u);
    if (xruns == "0") {
        BOOST_REQUIRE_EQUAL(played.frames.size(), 96000u);
        for (uint64_t i = 0; i < played.frames.size(); ++i) {
            BOOST_REQUIRE_EQUAL(played.frames[i], i);
        }
    } else {
        BOOST_TEST_MESSAGE("the card reported " << xruns << " xruns of its own");
        BOOST_CHECK(only_increasing(played.frames));
        BOOST_CHECK_GT(played.frames.size(), 90000u);
    }
}

BOOST_AUTO_TEST_CASE(plays_bit_exact_through_portaudio_alsa) {
    plays_bit_exact(false);
}

BOOST_AUTO_TEST_CASE(plays_bit_exact_from_a_helper_process) {
    plays_bit_exact(true);
}

// A device in the server, or (`own`) in a helper process, that is
// unplugged under a playing stream and comes back.
void unplug_and_replug(bool own) {
    TempDir dir;
    PortAudioServer card(dir, own ? "process = \"own\"\n" : "");
    PlayingClient client({"--signal", "sequence", "--sink", "card", "--app", "faithful"});
    const auto id = wait_for_stream(30s);
    BOOST_REQUIRE(id);
    BOOST_REQUIRE(wait_for_position(*id, 24000));
    touch(card.card + "/unplug");
    BOOST_CHECK(wait_for_sink_state("card", "failed", 20s));
    BOOST_REQUIRE_MESSAGE(playing_on("faithful", "spare"),
                          why_no_stream(client.program(), *card.server));
    ::unlink((card.card + "/unplug").c_str());
    // PortAudio finds the device again; the sink reopens and the stream returns.
    BOOST_CHECK(wait_for_sink_state("card", "running", 30s));
    BOOST_REQUIRE_MESSAGE(playing_on("faithful", "card"),
                          why_no_stream(client.program(), *card.server));
    const ProgramResult r = client.stop();
    BOOST_REQUIRE_MESSAGE(r.status == 0, r.err);
    const uint64_t written = json_number(r.out, "written").value_or(0);
    BOOST_REQUIRE_EQUAL(card.server->stop(SIGTERM), 0);

    const Played on_card = played_s32(card.card + "/played.raw");
    const auto on_spare = hear_sequence(dir.file("spare.wav"));
    BOOST_CHECK(!on_spare.values.empty());
    BOOST_CHECK(only_increasing(on_card.frames));
    BOOST_CHECK(on_spare.increasing);
    // No frame played twice; only the device buffer at the unplug is lost
    // (85 ms, less than 4096 frames at 48 kHz).
    std::set<uint64_t> all(on_card.frames.begin(), on_card.frames.end());
    for (const uint64_t v : on_spare.values) {
        BOOST_CHECK_MESSAGE(all.insert(v).second, "frame " << v << " played twice");
    }
    BOOST_CHECK_GT(all.size(), written - 2 * 4096);
    BOOST_CHECK_EQUAL(on_card.frames.back(), written - 1);
}

BOOST_AUTO_TEST_CASE(an_unplugged_device_hands_its_streams_over_and_takes_them_back) {
    unplug_and_replug(false);
}

BOOST_AUTO_TEST_CASE(an_unplugged_device_in_a_helper_process_hands_over_and_takes_back) {
    unplug_and_replug(true);
}

// Records 3 s from the card through the source, in the server or (`own`)
// in a helper process.
void records_every_frame(bool own) {
    TempDir dir;
    PortAudioMicServer mic(dir, own ? "process = \"own\"\n" : "");
    const ExactRecording r = record_exactly("mic", 3, dir.file("mic.wav"));
    const std::string listed = run_tool("audioctl", {"list", "sources"}).out;
    BOOST_CHECK_MESSAGE(listed.find("mic: host-api=alsa device=testcard pa-latency-ms=") !=
                            std::string::npos,
                        listed);
    const std::string sources = run_tool("audioctl", {"--json", "list", "sources"}).out;
    BOOST_REQUIRE_EQUAL(mic.server->stop(SIGTERM), 0);
    const Heard heard = hear_sequence(dir.file("mic.wav"));
    // Every frame, in order: the card's own s32 samples, converted by the
    // server to the recording's s16 without a bit lost.
    BOOST_CHECK_EQUAL(heard.values.size(), 3u * 48000);
    BOOST_CHECK(heard.increasing);
    // Where it went wrong, for a failure's message (a stress pass under
    // ASan once found one jump and 1024 frames missing): the frames around
    // each jump.
    std::ostringstream jumps;
    for (size_t i = 1; i < heard.values.size(); ++i) {
        if (heard.values[i] != heard.values[i - 1] + 1) {
            jumps << " at " << i << ": " << heard.values[i - 1] << " -> " << heard.values[i];
        }
    }
    if (r.overruns > 0) {
        BOOST_TEST_MESSAGE("the recorder overran in each of " << r.attempts
                                                              << " recordings: gaps not judged");
        return;
    }
    BOOST_CHECK_MESSAGE(sequence_jumps(heard) == 0, sequence_jumps(heard)
                                                        << " jumps" << jumps.str()
                                                        << "; sources: " << sources);
}

BOOST_AUTO_TEST_CASE(a_recording_gets_every_frame_the_card_captured) {
    records_every_frame(false);
}

BOOST_AUTO_TEST_CASE(a_recording_from_a_helper_process_gets_every_frame) {
    records_every_frame(true);
}

// No PortAudio call can take the server with it: a helper that dies (here
// killed) fails its sink alone, whose stream plays on elsewhere, and the
// reopen starts a new helper that takes the stream back.
BOOST_AUTO_TEST_CASE(a_helper_that_dies_fails_its_sink_alone_and_a_new_one_takes_over) {
    TempDir dir;
    PortAudioServer card(dir, "process = \"own\"\n");
    PlayingClient client({"--signal", "sequence", "--sink", "card", "--app", "faithful"});
    BOOST_REQUIRE_MESSAGE(playing_on("faithful", "card"),
                          why_no_stream(client.program(), *card.server));
    const std::string first = sink_field("card", "helper-pid");
    BOOST_REQUIRE(!first.empty());
    BOOST_REQUIRE_EQUAL(::kill(std::stoi(first), SIGKILL), 0);
    // Failed and reopened within a second or so: what happened meanwhile is
    // read from the log, not caught in passing.
    const auto logged = [&](const std::string& line) {
        return eventually([&] { return card.server->log().find(line) != std::string::npos; }, 20s);
    };
    BOOST_CHECK_MESSAGE(logged("sink card failed"), card.server->log());
    BOOST_CHECK_MESSAGE(logged("from=card to=spare"), card.server->log());
    BOOST_CHECK(wait_for_sink_state("card", "running", 30s));
    BOOST_REQUIRE_MESSAGE(playing_on("faithful", "card"),
                          why_no_stream(client.program(), *card.server));
    const std::string second = sink_field("card", "helper-pid");
    BOOST_CHECK(!second.empty() && second != first);
    BOOST_CHECK_EQUAL(run_tool("audioctl", {"info"}).status, 0);
    BOOST_REQUIRE_EQUAL(client.stop().status, 0);
    BOOST_REQUIRE_EQUAL(card.server->stop(SIGTERM), 0);
    // The helper ended with the sink: nothing of it is left.
    BOOST_CHECK(eventually([&] { return ::kill(std::stoi(second), 0) != 0; }, 10s));
}

// A recording helper whose server is killed outright ends by itself (its
// ring fills, and then it finds its parent gone): it stayed, reading the
// card for ever, once a stress pass's failed test had SIGKILLed its server.
BOOST_AUTO_TEST_CASE(a_recording_helper_ends_when_its_server_is_killed) {
    TempDir dir;
    PortAudioMicServer mic(dir, "process = \"own\"\n");
    std::string helper;
    BOOST_REQUIRE(
        eventually([&] { return !(helper = source_field("mic", "helper-pid")).empty(); }, 30s));
    BOOST_REQUIRE_EQUAL(mic.server->stop(SIGKILL), 128 + SIGKILL);
    // Gone, or a zombie that its new parent has not reaped yet.
    const auto ended = [&] {
        std::ifstream stat("/proc/" + helper + "/stat");
        std::string pid;
        std::string name;
        std::string state;
        return !(stat >> pid >> name >> state) || state == "Z";
    };
    BOOST_CHECK_MESSAGE(eventually(ended, 10s), "helper " << helper << " still runs");
    if (!ended()) {
        ::kill(std::stoi(helper), SIGKILL);
    }
}

BOOST_AUTO_TEST_CASE(an_unplugged_source_hands_its_recordings_over_and_takes_them_back) {
    TempDir dir;
    PortAudioMicServer mic(dir);
    Recording rec(dir.file("mic.wav"), {"--quiet", "--source", "mic"});
    const auto id = rec.id();
    BOOST_REQUIRE(wait_for_position(id, 48000));
    touch(mic.card + "/unplug");
    // (Once, under ASan beside stress-ng, the recording had not moved after
    // 20 s, with nothing to say why: 60 s, and the server's account.)
    BOOST_CHECK_MESSAGE(
        eventually([&] { return stream_field(id, "device") == "out.monitor"; }, 60s),
        "the recording never moved; sources:\n"
            << run_tool("audioctl", {"list", "sources"}).out << "server log:\n"
            << mic.server->log());
    BOOST_REQUIRE(wait_for_more(id, 48000));
    ::unlink((mic.card + "/unplug").c_str());
    BOOST_CHECK(eventually([&] { return stream_field(id, "device") == "mic"; }, 30s));
    BOOST_REQUIRE(wait_for_more(id, 120000));
    const ProgramResult r = rec.stop();
    BOOST_REQUIRE_MESSAGE(r.status == 0, r.err);
    BOOST_REQUIRE_EQUAL(mic.server->stop(SIGTERM), 0);
    // The reopened card starts its sequence again: the card before (1 s)
    // and after (2.5 s), the monitor's silence between.
    BOOST_CHECK_GT(hear_sequence(dir.file("mic.wav")).values.size(), 3u * 48000);
}

BOOST_AUTO_TEST_CASE(devices_are_named_exactly_in_part_or_by_index_and_refused_clearly) {
    TempDir dir;
    PortAudioServer card(dir);
    // PortAudio lists the test card's two PCMs: "testcard" and "default".
    ProgramResult r = run_tool("audioctl", {"load-sink", "portaudio", "x", "device=nowhere"});
    BOOST_CHECK_EQUAL(r.status, 1);
    BOOST_CHECK_MESSAGE(r.err.find("no PortAudio device that can play is named 'nowhere'") !=
                            std::string::npos,
                        r.err);
    BOOST_CHECK_MESSAGE(r.err.find("\"testcard\" (alsa)") != std::string::npos, r.err);
    BOOST_CHECK_MESSAGE(r.err.find("\"default\" (alsa)") != std::string::npos, r.err);
    r = run_tool("audioctl", {"load-sink", "portaudio", "x", "device=t"});
    BOOST_CHECK_EQUAL(r.status, 1);
    BOOST_CHECK_MESSAGE(r.err.find("'t' names 2 PortAudio devices") != std::string::npos, r.err);
    r = run_tool("audioctl", {"load-sink", "portaudio", "x", "host-api=jackd"});
    BOOST_CHECK_EQUAL(r.status, 1);
    BOOST_CHECK_MESSAGE(r.err.find("no host API 'jackd'") != std::string::npos, r.err);
    r = run_tool("audioctl", {"load-source", "portaudio", "x", "device=nowhere"});
    BOOST_CHECK_EQUAL(r.status, 1);
    BOOST_CHECK_MESSAGE(r.err.find("no PortAudio device that can record is named 'nowhere'") !=
                            std::string::npos,
                        r.err);
    r = run_tool("audioctl", {"load-sink", "portaudio", "x", "colour=red"});
    BOOST_CHECK_EQUAL(r.status, 1);
    BOOST_CHECK(r.err.find("no option 'colour'") != std::string::npos);
    // A unique part of a name, and an index, both open it.
    r = run_tool("audioctl", {"load-sink", "portaudio", "part", "device=stcar", "host-api=alsa"});
    BOOST_CHECK_MESSAGE(r.status == 0, r.err);
    BOOST_CHECK(sink_field("part", "state") == "running");
    const std::string json = run_tool("audiod", {"--list-devices", "--json"}).out;
    const std::string entry = R"("module":"portaudio","api":"alsa","index":)";
    const size_t at = json.find(entry);
    BOOST_REQUIRE_MESSAGE(at != std::string::npos, json);
    const std::string index =
        json.substr(at + entry.size(), json.find(',', at + entry.size()) - (at + entry.size()));
    BOOST_REQUIRE_MESSAGE(
        json.compare(at + entry.size() + index.size(), 18, R"(,"name":"testcard")") == 0, json);
    r = run_tool("audioctl", {"load-sink", "portaudio", "indexed", "device=" + index});
    BOOST_CHECK_MESSAGE(r.status == 0, r.err);
    BOOST_CHECK(run_tool("audioctl", {"list", "sinks"})
                    .out.find("indexed: host-api=alsa "
                              "device=testcard") != std::string::npos);
    BOOST_CHECK_EQUAL(card.server->stop(SIGTERM), 0);
}

BOOST_AUTO_TEST_CASE(list_devices_shows_alsa_pcms_and_portaudio_devices) {
    TempDir dir;
    use_test_card(dir);
    const ProgramResult table = run_tool("audiod", {"--list-devices"});
    BOOST_CHECK_EQUAL(table.status, 0);
    BOOST_TEST_MESSAGE(table.out);
    // The ALSA PCM by its hint, and PortAudio's view of the same card: its
    // channels each way, default rate and latencies.
    BOOST_CHECK(has_row(table.out, {"alsa", "alsa", "-", "testcard", "yes", "yes", "-", "-",
                                    "audiod", "test", "card"}));
    BOOST_CHECK_MESSAGE(
        has_row(table.out, {"portaudio", "alsa", "#", "testcard", "8", "8", "#", "#/#"}),
        table.out);
    const ProgramResult json = run_tool("audiod", {"--list-devices", "--json"});
    BOOST_CHECK_EQUAL(json.status, 0);
    BOOST_CHECK_MESSAGE(json.out.find(R"("module":"portaudio","api":"alsa")") != std::string::npos,
                        json.out);
    BOOST_CHECK(json.out.find(R"("playback_channels":8,"capture_channels":8,"default_rate":)") !=
                std::string::npos);
    BOOST_CHECK(json.out.find(
                    R"x("name":"testcard","description":"audiod test card (paced by a clock)")x") !=
                std::string::npos);
    BOOST_CHECK_EQUAL(run_tool("audiod", {"--json"}).status, 2);
}

BOOST_AUTO_TEST_SUITE_END()

// Through PortAudio's JACK host API, against the test's own paced jackd
// (a suite of its own: it needs jackd2, and a ctest entry to itself).
BOOST_AUTO_TEST_SUITE(portaudio_jack)

BOOST_AUTO_TEST_CASE(
    a_tone_comes_out_of_jack_and_jackd_going_and_coming_back_takes_the_sink_along) {
    TempDir dir;
    use_test_card(dir);
    DummyJack jack;
    const JackSanitizerSettings sanitizers(dir);
    ServerProcess server("[server]\nrt-priority = 0\ndefault-sink = \"studio\"\n\n[sinks.studio]\n"
                         "type = \"portaudio\"\nhost-api = \"jack\"\n\n[sinks.spare]\ntype = "
                         "\"null\"\n");
    const std::string listed = run_tool("audioctl", {"list", "sinks"}).out;
    BOOST_REQUIRE_MESSAGE(listed.find("studio: host-api=jack device=system") != std::string::npos,
                          listed);
    // JACK's devices get a helper process, whose JACK client is named
    // after the sink.
    const std::string first_helper = sink_field("studio", "helper-pid");
    BOOST_REQUIRE_MESSAGE(!first_helper.empty(), listed);
    // The helper's JACK client, as JACK named it: "audiod-studio", or
    // "audiod-studio-01" when a helper that failed on a loaded machine had
    // left its client in the graph a moment longer (a stress pass).
    const auto studio_client = [] {
        std::string name;
        eventually(
            [&] {
                name = sink_field("studio", "jack-client");
                return name.starts_with("audiod-studio");
            },
            30s);
        return name;
    };
    // What the helper's client sends into the JACK graph, recorded by a
    // JACK client of JACK's own, while a tone plays.
    const auto play_tone = [] {
        const ProgramResult played =
            run_tool("audioplay", {"--quiet", "--tone", "1000", "--duration", "1"}, 30s);
        BOOST_REQUIRE_MESSAGE(played.status == 0, played.err);
    };
    check_tone_from_jack(dir, server, jack, studio_client() + ":out_0", studio_client() + ":out_1",
                         play_tone);

    // JACK goes away under a playing stream: the sink fails, the stream
    // plays on in the other sink, and the server answers throughout. (A
    // JACK server held up on a loaded machine may have failed the sink
    // before; it has come back by itself then.)
    PlayingClient client({"--signal", "sequence", "--sink", "studio", "--app", "faithful"});
    BOOST_REQUIRE_MESSAGE(playing_on("faithful", "studio"), why_no_stream(client.program(), server)
                                                                << "jackd said:\n"
                                                                << jack.said());
    const std::string helper = sink_field("studio", "helper-pid");
    jack.stop();
    BOOST_CHECK(wait_for_sink_state("studio", "failed", 20s));
    BOOST_REQUIRE_MESSAGE(playing_on("faithful", "spare"), why_no_stream(client.program(), server)
                                                               << "jackd said:\n"
                                                               << jack.said());
    // Its helper ended, and took PortAudio's and libjack's state with it.
    BOOST_CHECK(eventually([&] { return ::kill(std::stoi(helper), 0) != 0; }, 10s));
    BOOST_CHECK_EQUAL(run_tool("audioctl", {"info"}).status, 0);

    // jackd comes back: a new helper opens the device, the sink runs again
    // and takes its stream back, and a tone comes out of the new JACK.
    jack.start();
    BOOST_CHECK_MESSAGE(wait_for_sink_state("studio", "running", 60s), server.log());
    BOOST_REQUIRE_MESSAGE(playing_on("faithful", "studio"), why_no_stream(client.program(), server)
                                                                << "jackd said:\n"
                                                                << jack.said());
    BOOST_CHECK_NE(sink_field("studio", "helper-pid"), helper);
    BOOST_REQUIRE_EQUAL(client.stop().status, 0);
    check_tone_from_jack(dir, server, jack, studio_client() + ":out_0", studio_client() + ":out_1",
                         play_tone);
    const int status = server.stop(SIGTERM);
    BOOST_CHECK_MESSAGE(status == 0, "the server exited " << status << ":\n" << server.log());
}

BOOST_AUTO_TEST_SUITE_END()
