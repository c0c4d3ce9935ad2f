// libpulse's own programs (pactl, paplay, pacat from pulseaudio-utils,
// libpulse 16.1) against audiod's PulseAudio-protocol server: the
// handshake, what the server says of itself, the pulse socket's ownership
// (a live one is never taken, a stale one is), and playback: what paplay
// plays comes out of the sink bit-exact, and pacat's latency reports
// match what it asked for.
#include "helpers.h"
#include "protocol/unique_fd.h"
#include "pulse/session.h"
#include "support/tone_analysis.h"

#include <boost/test/unit_test.hpp>

#include <algorithm>
#include <arpa/inet.h>
#include <cmath>
#include <csignal>
#include <cstring>
#include <fstream>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <thread>
#include <unistd.h>

using namespace audiod;
using namespace audiod::test;
using namespace std::chrono_literals;
namespace wire = audiod::pulse; // the protocol's own, for a client of ours

namespace {

// A null sink NAME and the pulse server on `pulse_socket`.
std::string pulse_config(const std::string& sink, const std::string& pulse_socket) {
    return "[server]\nrt-priority = 0\n[sinks." + sink +
           "]\ntype = \"null\"\n[pulse]\nsocket = \"" + pulse_socket + "\"\n";
}

// Null sinks speakers and hdmi, EXTRA, and the pulse server on
// `pulse_socket`.
std::string two_sinks_config(const std::string& pulse_socket, const std::string& extra = "") {
    return "[server]\nrt-priority = 0\n[sinks.speakers]\ntype = \"null\"\n[sinks.hdmi]\ntype = "
           "\"null\"\n" +
           extra + "[pulse]\nsocket = \"" + pulse_socket + "\"\n";
}

// The environment that sends a libpulse program to the server on
// `pulse_socket`, never autospawning a PulseAudio of its own.
std::map<std::string, std::string> pulse_env(const TempDir& dir, const std::string& pulse_socket) {
    const std::string client_conf = dir.file("client.conf");
    if (::access(client_conf.c_str(), R_OK) != 0) {
        std::ofstream(client_conf) << "autospawn = no\n";
    }
    return {{"PULSE_SERVER", "unix:" + pulse_socket},
            {"PULSE_CLIENTCONFIG", client_conf},
            {"PULSE_COOKIE", dir.file("cookie")}};
}

// Runs libpulse's PROGRAM (pactl, paplay...) with ARGS against the server
// on `pulse_socket`.
ProgramResult pulse_program(const TempDir& dir, const std::string& pulse_socket,
                            const std::string& program, const std::vector<std::string>& args,
                            std::chrono::milliseconds limit = 30s) {
    std::vector<std::string> argv{installed(program)};
    argv.insert(argv.end(), args.begin(), args.end());
    return run_program(argv, limit, pulse_env(dir, pulse_socket));
}

// Runs tests/fixtures' audiod-pulse-client (libpulse calls pactl lacks).
ProgramResult pulse_client(const TempDir& dir, const std::string& pulse_socket,
                           const std::vector<std::string>& args) {
    std::vector<std::string> argv{bin("audiod-pulse-client")};
    argv.insert(argv.end(), args.begin(), args.end());
    return run_program(argv, 30s, pulse_env(dir, pulse_socket));
}

ProgramResult pactl(const TempDir& dir, const std::string& pulse_socket,
                    const std::vector<std::string>& args) {
    return pulse_program(dir, pulse_socket, "pactl", args);
}

// A file sink OUT (s16le) and the pulse server on `pulse_socket`.
std::string pulse_file_config(const std::string& out, const std::string& pulse_socket) {
    return file_sink_config(out, 256, "[pulse]\nsocket = \"" + pulse_socket + "\"\n");
}

// The value after "KEY: " on a line of pactl's output ("" if none).
std::string field(const std::string& text, const std::string& key) {
    const size_t at = text.find("\n" + key + ": ");
    const size_t start = at == std::string::npos ? text.rfind(key + ": ", 0) : at + 1;
    if (start == std::string::npos) {
        return "";
    }
    const size_t value = start + key.size() + 2;
    return text.substr(value, text.find('\n', value) - value);
}

// Checks that the stereo s16 WAV `in` is in `out` (a file sink's), whole and
// bit-exact, from its first sound on.
void check_heard_whole(const std::string& in_wav, const std::string& out_wav) {
    const auto in = read_wav_s16(in_wav);
    const auto out = read_wav_s16(out_wav);
    const auto start = first_sound(out, 2);
    BOOST_REQUIRE(start);
    BOOST_REQUIRE_GE(out.size(), *start * 2 + in.size());
    BOOST_CHECK(std::equal(in.begin(), in.end(), out.begin() + static_cast<ptrdiff_t>(*start * 2)));
}

// Whether `server` says it serves pulse clients, within 10 s.
bool serves_pulse(const ServerProcess& server) {
    return eventually([&] { return server.log().find("pulse: listening") != std::string::npos; },
                      10s);
}

} // namespace

BOOST_AUTO_TEST_SUITE(pulse)

BOOST_AUTO_TEST_CASE(pactl_info_names_audiod_its_protocol_and_default_sink) {
    TempDir dir;
    const std::string socket = dir.file("pulse/native");
    ServerProcess server(pulse_config("speakers", socket));
    BOOST_REQUIRE_MESSAGE(serves_pulse(server), server.log());
    const ProgramResult info = pactl(dir, socket, {"info"});
    BOOST_REQUIRE_MESSAGE(info.status == 0, info.err << server.log());
    BOOST_CHECK_EQUAL(field(info.out, "Server Name").rfind("PulseAudio (on audiod ", 0), 0u);
    BOOST_CHECK_EQUAL(field(info.out, "Server Protocol Version"), "35");
    BOOST_CHECK_EQUAL(field(info.out, "Default Sink"), "speakers");
    BOOST_CHECK_EQUAL(field(info.out, "Default Source"), "speakers.monitor");
    BOOST_CHECK_EQUAL(field(info.out, "Default Sample Specification"), "s16le 2ch 48000Hz");
    // The socket is the user's alone, as PulseAudio's own.
    struct stat about {};
    BOOST_REQUIRE_EQUAL(::stat(socket.c_str(), &about), 0);
    BOOST_CHECK_EQUAL(about.st_mode & 0777, 0600u);
    BOOST_CHECK_EQUAL(server.stop(SIGTERM), 0);
    BOOST_CHECK_MESSAGE(::access(socket.c_str(), F_OK) != 0, "the pulse socket outlived audiod");
}

BOOST_AUTO_TEST_CASE(a_pulse_socket_someone_serves_is_left_alone) {
    TempDir dir;
    const std::string socket = dir.file("pulse/native");
    TempDir first_dir;
    ServerProcess first(pulse_config("first", socket), first_dir.path());
    BOOST_REQUIRE_MESSAGE(serves_pulse(first), first.log());
    TempDir second_dir;
    ServerProcess second(pulse_config("second", socket), second_dir.path());
    // The second serves its own clients, says why it does not serve pulse
    // ones, and the first keeps its socket, during and after the second.
    BOOST_CHECK(
        eventually([&] { return second.log().find("already serves") != std::string::npos; }, 10s));
    const ProgramResult list = run_tool("audioctl", {"list", "sinks"});
    BOOST_CHECK_MESSAGE(list.status == 0 && list.out.find("second") != std::string::npos, list.err);
    BOOST_CHECK_EQUAL(field(pactl(dir, socket, {"info"}).out, "Default Sink"), "first");
    BOOST_CHECK_EQUAL(second.stop(SIGTERM), 0);
    const ProgramResult after = pactl(dir, socket, {"info"});
    BOOST_CHECK_MESSAGE(after.status == 0, after.err);
    BOOST_CHECK_EQUAL(field(after.out, "Default Sink"), "first");
}

BOOST_AUTO_TEST_CASE(a_pulse_socket_left_by_a_dead_server_is_taken_over) {
    TempDir dir;
    const std::string socket = dir.file("pulse/native");
    BOOST_REQUIRE_EQUAL(::mkdir(dir.file("pulse").c_str(), 0700), 0);
    {
        // Bound and closed: a socket file nobody answers on.
        const int fd = ::socket(AF_UNIX, SOCK_STREAM, 0);
        sockaddr_un address{};
        address.sun_family = AF_UNIX;
        std::strncpy(address.sun_path, socket.c_str(), sizeof address.sun_path - 1);
        BOOST_REQUIRE_EQUAL(::bind(fd, reinterpret_cast<const sockaddr*>(&address), sizeof address),
                            0);
        ::close(fd);
    }
    ServerProcess server(pulse_config("speakers", socket));
    BOOST_REQUIRE_MESSAGE(serves_pulse(server), server.log());
    const ProgramResult info = pactl(dir, socket, {"info"});
    BOOST_CHECK_MESSAGE(info.status == 0, info.err << server.log());
    BOOST_CHECK_EQUAL(field(info.out, "Default Sink"), "speakers");
}

BOOST_AUTO_TEST_CASE(a_client_speaking_nonsense_is_dropped_and_others_are_served) {
    TempDir dir;
    const std::string socket = dir.file("pulse/native");
    ServerProcess server(pulse_config("speakers", socket));
    BOOST_REQUIRE_MESSAGE(serves_pulse(server), server.log());
    const int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_un address{};
    address.sun_family = AF_UNIX;
    std::strncpy(address.sun_path, socket.c_str(), sizeof address.sun_path - 1);
    BOOST_REQUIRE_EQUAL(::connect(fd, reinterpret_cast<const sockaddr*>(&address), sizeof address),
                        0);
    // A frame header claiming 4 GiB of payload.
    const uint8_t nonsense[20] = {0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0, 0,
                                  0,    0,    0,    0,    0,    0,    0,    0,    0, 0};
    BOOST_REQUIRE_EQUAL(::write(fd, nonsense, sizeof nonsense), 20);
    // The server closes it: read() sees the end.
    timeval patience{30, 0};
    ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &patience, sizeof patience);
    char byte = 0;
    BOOST_CHECK_EQUAL(::read(fd, &byte, 1), 0);
    ::close(fd);
    const ProgramResult info = pactl(dir, socket, {"info"});
    BOOST_CHECK_MESSAGE(info.status == 0, info.err << server.log());
    BOOST_CHECK(server.log().find("bytes (1 to") != std::string::npos);
}

// Both ways audio may come: as references into paplay's memfd pool (the
// default, for a client of the server's uid), and in the frames
// themselves (shared memory turned off, as pipewire-pulse always has it).
BOOST_AUTO_TEST_CASE(paplay_plays_a_wav_bit_exact_and_ends_when_it_is_heard) {
    for (const bool shared : {true, false}) {
        BOOST_TEST_CONTEXT("shared memory " << shared) {
            TempDir dir;
            const std::string socket = dir.file("pulse/native");
            write_signal_wav(dir.file("in.wav"), "random", 48000);
            ServerProcess server(
                file_sink_config(dir.file("out.wav"), 256,
                                 "[pulse]\nsocket = \"" + socket +
                                     "\"\nshared-memory = " + (shared ? "true" : "false") + "\n"));
            BOOST_REQUIRE_MESSAGE(serves_pulse(server), server.log());
            // paplay drains at the end: it exits once the server says all
            // was heard. libpulse says what it agreed on (PULSE_LOG).
            auto env = pulse_env(dir, socket);
            env["PULSE_LOG"] = "4";
            const ProgramResult played =
                run_program({installed("paplay"), dir.file("in.wav")}, 60s, env);
            BOOST_REQUIRE_MESSAGE(played.status == 0, played.err << server.log());
            BOOST_CHECK_GE(played.seconds, 0.9);
            const std::string agreed =
                shared ? "Negotiated SHM type: shared memfd" : "Negotiated SHM: no";
            BOOST_CHECK_MESSAGE(played.err.find(agreed) != std::string::npos, played.err);
            BOOST_REQUIRE_EQUAL(server.stop(SIGTERM), 0);
            check_heard_whole(dir.file("in.wav"), dir.file("out.wav"));
            BOOST_CHECK(server.log().find("app=\"paplay\"") != std::string::npos);
        }
    }
}

BOOST_AUTO_TEST_CASE(a_pulse_stream_is_an_audiod_stream_of_its_application) {
    TempDir dir;
    const std::string socket = dir.file("pulse/native");
    write_signal_wav(dir.file("in.wav"), "random", 48000 * 30);
    ServerProcess server(pulse_file_config(dir.file("out.wav"), socket));
    BOOST_REQUIRE_MESSAGE(serves_pulse(server), server.log());
    BackgroundProgram player({installed("paplay"), dir.file("in.wav")}, pulse_env(dir, socket));
    // audioctl lists it under libpulse's application name, and sees it play.
    const auto id = wait_for_playing("paplay", 30s);
    BOOST_REQUIRE_MESSAGE(id, player.errors_so_far() << server.log());
    BOOST_CHECK_EQUAL(stream_field(*id, "device"), "out");
    BOOST_CHECK(wait_for_more(*id, 48000));
    ::kill(player.pid(), SIGTERM);
    player.finish();
    // Its stream goes with its connection.
    BOOST_CHECK(eventually([] { return app_streams("paplay").empty(); }, 10s));
}

// A stream that names its channels in another order (right first) is
// heard in the right speakers: what pacat sends as its first channel
// comes out of the sink's second, sample for sample.
BOOST_AUTO_TEST_CASE(a_stream_in_another_channel_order_is_heard_in_the_right_speakers) {
    TempDir dir;
    const std::string socket = dir.file("pulse/native");
    write_signal_wav(dir.file("in.wav"), "random", 48000);
    const auto in = read_wav_s16(dir.file("in.wav"));
    {
        std::ofstream raw(dir.file("in.raw"), std::ios::binary);
        raw.write(reinterpret_cast<const char*>(in.data()),
                  static_cast<std::streamsize>(in.size() * sizeof(int16_t)));
    }
    ServerProcess server(pulse_file_config(dir.file("out.wav"), socket));
    BOOST_REQUIRE_MESSAGE(serves_pulse(server), server.log());
    const ProgramResult played =
        pulse_program(dir, socket, "pacat",
                      {"--raw", "--format=s16le", "--rate=48000", "--channels=2",
                       "--channel-map=front-right,front-left", dir.file("in.raw")},
                      60s);
    BOOST_REQUIRE_MESSAGE(played.status == 0, played.err << server.log());
    BOOST_REQUIRE_EQUAL(server.stop(SIGTERM), 0);
    const auto out = read_wav_s16(dir.file("out.wav"));
    const auto start = first_sound(out, 2);
    BOOST_REQUIRE(start);
    BOOST_REQUIRE_GE(out.size(), *start * 2 + in.size());
    bool swapped = true;
    for (size_t frame = 0; frame < in.size() / 2 && swapped; ++frame) {
        swapped = out[(*start + frame) * 2] == in[frame * 2 + 1] &&
                  out[(*start + frame) * 2 + 1] == in[frame * 2];
    }
    BOOST_CHECK_MESSAGE(swapped, "the channels did not come out swapped");
}

// pacat's latency is what it asked for, and what the server computes of
// the same stream (pactl's sink-input Buffer and Sink Latency: the queue
// in its ring and the sink's delay) agrees with what pacat's clock says.
BOOST_AUTO_TEST_CASE(pacat_reports_the_latency_it_asked_for) {
    TempDir dir;
    const std::string socket = dir.file("pulse/native");
    write_signal_wav(dir.file("in.wav"), "random", 48000 * 6);
    ServerProcess server(pulse_config("speakers", socket));
    BOOST_REQUIRE_MESSAGE(serves_pulse(server), server.log());
    // -v prints "Latency: N usec" every 50 ms, from GET_PLAYBACK_LATENCY:
    // the queue (write index - read index) and the sink's own delay.
    BackgroundProgram pacat(
        {installed("pacat"), "-v", "--latency-msec=20", "--file-format=wav", dir.file("in.wav")},
        pulse_env(dir, socket));
    const auto id = wait_for_playing("pacat", 30s, 4800);
    BOOST_REQUIRE_MESSAGE(id, pacat.errors_so_far() << server.log());
    // What the server computes, a few times while it plays.
    std::vector<double> computed;
    for (int i = 0; i < 10 && stream_field(*id, "state") == "running"; ++i) {
        const std::string inputs = pactl(dir, socket, {"list", "sink-inputs"}).out;
        const std::string buffer = field(inputs, "\tBuffer Latency");
        const std::string sink = field(inputs, "\tSink Latency");
        if (!buffer.empty() && !sink.empty()) {
            computed.push_back((std::stod(buffer) + std::stod(sink)) / 1000.0);
        }
        std::this_thread::sleep_for(200ms);
    }
    const ProgramResult played = pacat.finish(60s);
    BOOST_REQUIRE_MESSAGE(played.status == 0, played.err << server.log());
    std::vector<double> latencies;
    const std::string marker = "Latency: ";
    for (size_t at = played.err.find(marker); at != std::string::npos;
         at = played.err.find(marker, at + 1)) {
        latencies.push_back(std::stod(played.err.substr(at + marker.size())) / 1000.0);
    }
    BOOST_REQUIRE_GE(latencies.size(), 20u);
    BOOST_REQUIRE_GE(computed.size(), 3u);
    const auto median = [](std::vector<double> values) {
        std::sort(values.begin(), values.end());
        return values[values.size() / 2];
    };
    // 20 ms asked for: the median is that, within 5 ms (a loaded machine
    // under a sanitizer may hold pacat up, and its queue with it: the
    // bound is for the median, not every report); the server's own figure
    // within 5 ms of pacat's.
    const double heard = median(latencies);
    BOOST_CHECK_MESSAGE(heard > 15.0 && heard < 25.0, "median latency " << heard << " ms");
    const double server_says = median(computed);
    BOOST_TEST_MESSAGE("latency: pacat " << heard << " ms, the server " << server_says << " ms");
    BOOST_CHECK_MESSAGE(std::abs(server_says - heard) < 5.0,
                        "pacat " << heard << " ms, the server " << server_says << " ms");
}

BOOST_AUTO_TEST_CASE(pactl_lists_sinks_sources_streams_and_clients) {
    TempDir dir;
    const std::string socket = dir.file("pulse/native");
    write_signal_wav(dir.file("in.wav"), "random", 48000 * 30);
    ServerProcess server(pulse_file_config(dir.file("out.wav"), socket));
    BOOST_REQUIRE_MESSAGE(serves_pulse(server), server.log());
    BackgroundProgram player({installed("paplay"), dir.file("in.wav")}, pulse_env(dir, socket));
    BOOST_REQUIRE_MESSAGE(wait_for_playing("paplay", 30s), player.errors_so_far() << server.log());
    // Everything libpulse reads must parse: one bad field fails the whole
    // of pactl's context.
    const ProgramResult all = pactl(dir, socket, {"list"});
    BOOST_REQUIRE_MESSAGE(all.status == 0, all.err << server.log());
    for (const char* part :
         {"Sink #0", "Name: out", "Source #0", "Name: out.monitor", "Monitor of Sink: out",
          "Sink Input #", "application.name = \"paplay\"", "/in.wav\"", "Client #",
          "Sample Specification: s16le 2ch 48000Hz"}) {
        BOOST_CHECK_MESSAGE(all.out.find(part) != std::string::npos, "no \"" << part << "\" in\n"
                                                                             << all.out);
    }
    const ProgramResult json = pactl(dir, socket, {"-f", "json", "list", "sinks"});
    BOOST_REQUIRE_MESSAGE(json.status == 0, json.err);
    std::ofstream(dir.file("sinks.json")) << json.out;
    const ProgramResult valid =
        run_program({installed("python3"), "-c",
                     "import json,sys; s=json.load(open(sys.argv[1])); "
                     "assert s[0]['name']=='out' and s[0]['monitor_source']=='out.monitor'",
                     dir.file("sinks.json")});
    BOOST_CHECK_MESSAGE(valid.status == 0, valid.err << json.out);
    // Single lookups, by name and by the default's alias.
    BOOST_CHECK_EQUAL(pactl(dir, socket, {"get-sink-volume", "@DEFAULT_SINK@"}).status, 0);
    const ProgramResult missing = pactl(dir, socket, {"get-sink-volume", "nowhere"});
    BOOST_CHECK_NE(missing.status, 0);
    BOOST_CHECK_EQUAL(pactl(dir, socket, {"stat"}).status, 0);
    ::kill(player.pid(), SIGTERM);
    player.finish();
}

// pactl's controls act on audiod's engine: what it sets, audioctl shows
// (pulse volumes are cubic: 50 % is an amplitude of 0.125, which audioctl
// shows as 12 %), and a move is audiod's move.
BOOST_AUTO_TEST_CASE(pactl_controls_are_audiods_volumes_mutes_moves_and_default) {
    TempDir dir;
    const std::string socket = dir.file("pulse/native");
    write_signal_wav(dir.file("in.wav"), "random", 48000 * 30);
    ServerProcess server(two_sinks_config(socket));
    BOOST_REQUIRE_MESSAGE(serves_pulse(server), server.log());
    BackgroundProgram player({installed("paplay"), dir.file("in.wav")}, pulse_env(dir, socket));
    const auto id = wait_for_playing("paplay", 30s);
    BOOST_REQUIRE_MESSAGE(id, player.errors_so_far() << server.log());
    const std::string input = std::to_string(*id);
    const auto ok = [&](const std::vector<std::string>& args) {
        const ProgramResult r = pactl(dir, socket, args);
        BOOST_CHECK_MESSAGE(r.status == 0, "pactl " << args.front() << ": " << r.err);
    };
    ok({"set-sink-volume", "hdmi", "50%"});
    BOOST_CHECK_EQUAL(sink_field("hdmi", "volume"), "0.125");
    ok({"set-sink-mute", "speakers", "1"});
    BOOST_CHECK_EQUAL(sink_field("speakers", "muted"), "true");
    ok({"set-sink-input-volume", input, "50%"});
    BOOST_CHECK_EQUAL(stream_field(*id, "volume"), "0.125");
    ok({"set-sink-input-mute", input, "1"});
    BOOST_CHECK_EQUAL(stream_field(*id, "muted"), "true");
    ok({"move-sink-input", input, "hdmi"});
    BOOST_CHECK_EQUAL(stream_field(*id, "device"), "hdmi");
    BOOST_CHECK(wait_for_more(*id, 4800));
    ok({"set-default-sink", "hdmi"});
    BOOST_CHECK_EQUAL(sink_field("hdmi", "default"), "true");
    // Names that are not there are refused, and nothing changes.
    BOOST_CHECK_NE(pactl(dir, socket, {"move-sink-input", input, "nowhere"}).status, 0);
    BOOST_CHECK_NE(pactl(dir, socket, {"set-sink-volume", "nowhere", "10%"}).status, 0);
    BOOST_CHECK_EQUAL(stream_field(*id, "device"), "hdmi");
    ::kill(player.pid(), SIGTERM);
    player.finish();
}

// parec of a sink's monitor hears what paplay played, sample for sample.
BOOST_AUTO_TEST_CASE(parec_of_a_monitor_records_what_paplay_plays_bit_exact) {
    TempDir dir;
    const std::string socket = dir.file("pulse/native");
    write_signal_wav(dir.file("in.wav"), "random", 48000);
    ServerProcess server(pulse_config("speakers", socket));
    BOOST_REQUIRE_MESSAGE(serves_pulse(server), server.log());
    BackgroundProgram recorder({installed("parec"), "-d", "speakers.monitor", "--rate=48000",
                                "--format=s16le", "--channels=2", "--latency-msec=50",
                                dir.file("rec.raw")},
                               pulse_env(dir, socket));
    BOOST_REQUIRE_MESSAGE(wait_for_stream(30s), recorder.errors_so_far() << server.log());
    const ProgramResult played = pulse_program(dir, socket, "paplay", {dir.file("in.wav")}, 60s);
    BOOST_REQUIRE_MESSAGE(played.status == 0, played.err << server.log());
    // The whole second, and a little after it, has reached the file.
    const auto in = read_wav_s16(dir.file("in.wav"));
    const auto recorded = [&] {
        const std::string raw = file_contents(dir.file("rec.raw"));
        std::vector<int16_t> samples(raw.size() / 2);
        std::memcpy(samples.data(), raw.data(), samples.size() * 2);
        return samples;
    };
    BOOST_CHECK(eventually(
        [&] {
            const auto out = recorded();
            const auto start = first_sound(out, 2);
            return start && out.size() >= *start * 2 + in.size();
        },
        30s));
    ::kill(recorder.pid(), SIGINT);
    recorder.finish();
    const auto out = recorded();
    const auto start = first_sound(out, 2);
    BOOST_REQUIRE(start);
    BOOST_REQUIRE_GE(out.size(), *start * 2 + in.size());
    BOOST_CHECK(std::equal(in.begin(), in.end(), out.begin() + static_cast<ptrdiff_t>(*start * 2)));
}

// pactl subscribe hears what happens in audiod, whoever does it: a libpulse
// stream, an audioctl volume, a sink loaded and unloaded.
BOOST_AUTO_TEST_CASE(pactl_subscribe_hears_audiods_events) {
    TempDir dir;
    const std::string socket = dir.file("pulse/native");
    write_signal_wav(dir.file("in.wav"), "random", 4800);
    ServerProcess server(pulse_config("speakers", socket));
    BOOST_REQUIRE_MESSAGE(serves_pulse(server), server.log());
    BackgroundProgram watcher({installed("pactl"), "subscribe"}, pulse_env(dir, socket));
    // Once it has subscribed, another client's connection is announced.
    BOOST_REQUIRE_MESSAGE(eventually(
                              [&] {
                                  (void)pactl(dir, socket, {"info"});
                                  return watcher.output_so_far().find("on client #") !=
                                         std::string::npos;
                              },
                              30s),
                          watcher.errors_so_far() << server.log());
    const ProgramResult played = pulse_program(dir, socket, "paplay", {dir.file("in.wav")}, 60s);
    BOOST_REQUIRE_MESSAGE(played.status == 0, played.err);
    ctl_ok({"set-volume", "sink:speakers", "50%"});
    ctl_ok({"load-sink", "null", "extra"});
    ctl_ok({"unload-sink", "extra"});
    for (const char* line :
         {"Event 'new' on sink-input #", "Event 'remove' on sink-input #",
          "Event 'change' on sink #0", "Event 'new' on sink #1", "Event 'remove' on sink #1",
          "Event 'new' on source #1", "Event 'remove' on source #1"}) {
        BOOST_CHECK_MESSAGE(
            eventually([&] { return watcher.output_so_far().find(line) != std::string::npos; },
                       10s),
            "no \"" << line << "\" in\n"
                    << watcher.output_so_far());
    }
    ::kill(watcher.pid(), SIGINT);
    watcher.finish();
}

// Players whose clock is the server's read index (GStreamer's pulsesink)
// or that never wait for a prebuffer (mpv) play to the end and stop, with
// their tone at its pitch and about its length. Not to the frame: such a
// player, starved for a moment, has its late audio dropped (the read index
// went on without it, as in PulseAudio) or leaves a gap, and a loaded CI
// machine starves them now and then, a second queued or not (pulsesink
// writes only as its clock goes): 18 ms short was seen, and 0.15 s off
// before the pulse thread ran at the audio threads' nice level. What reaches the
// sink bit for bit is paplay's case above; the dropping, the unit tests'.
// Each keeps a second queued in the server all the same (their defaults,
// 100 and 200 ms, were starved often).
BOOST_AUTO_TEST_CASE(gstreamer_and_mpv_play_their_tone_to_the_end) {
    TempDir dir;
    const std::string socket = dir.file("pulse/native");
    const auto float_sink = [&](const std::string& name) {
        return "[sinks." + name + "]\ntype = \"file\"\nformat = \"f32le\"\npath = \"" +
               dir.file(name + ".wav") + "\"\n";
    };
    ServerProcess server("[server]\nrt-priority = 0\n" + float_sink("out") + float_sink("mpv") +
                         "[pulse]\nsocket = \"" + socket + "\"\n");
    BOOST_REQUIRE_MESSAGE(serves_pulse(server), server.log());
    // 100 buffers of 1024 frames at 48 kHz: 2.13 s of 1 kHz.
    const ProgramResult gst =
        pulse_program(dir, socket, "gst-launch-1.0",
                      {"-q", "audiotestsrc", "num-buffers=100", "freq=1000", "volume=0.5", "!",
                       "audio/x-raw,rate=48000,channels=2,format=S16LE", "!", "pulsesink",
                       "device=out", "buffer-time=1000000", "latency-time=50000"},
                      60s);
    BOOST_REQUIRE_MESSAGE(gst.status == 0, gst.err << server.log());
    write_tone_wav(dir.file("tone.wav"), 48000, 1000.0, 1.0);
    const ProgramResult mpv =
        pulse_program(dir, socket, "mpv",
                      {"--no-config", "--really-quiet", "--ao=pulse", "--audio-device=pulse/mpv",
                       "--audio-buffer=1", "--pulse-buffer=1000", dir.file("tone.wav")},
                      60s);
    BOOST_REQUIRE_MESSAGE(mpv.status == 0, mpv.err << server.log());
    BOOST_REQUIRE_EQUAL(server.stop(SIGTERM), 0);
    const auto check = [&](const std::string& wav, double seconds) {
        const HeardTone heard = hear_tone(read_wav_f32(dir.file(wav)), 2, 48000, 1000.0);
        BOOST_CHECK_CLOSE(heard.frequency, 1000.0, 1.0);
        BOOST_CHECK_LE(std::fabs(heard.seconds - seconds), 0.25);
        BOOST_CHECK_LE(heard.longest_quiet, 48000 / 4);
    };
    check("out.wav", 102400.0 / 48000);
    check("mpv.wav", 1.0);
}

// A player's clock follows libpulse's latency reports, and so follows
// what the server says it has played: mpv playing a film through the
// pulse server keeps its picture within 20 ms of its sound for a whole
// minute (mpv's own avsync, sampled twice a second by a script of ours).
BOOST_AUTO_TEST_CASE(mpv_keeps_picture_and_sound_together_for_a_minute) {
    TempDir dir;
    const std::string socket = dir.file("pulse/native");
    ServerProcess server(pulse_config("speakers", socket));
    BOOST_REQUIRE_MESSAGE(serves_pulse(server), server.log());
    const std::string film = dir.file("film.mkv");
    const ProgramResult made = run_program({installed("ffmpeg"),
                                            "-nostdin",
                                            "-loglevel",
                                            "error",
                                            "-f",
                                            "lavfi",
                                            "-i",
                                            "testsrc=size=160x120:rate=25",
                                            "-f",
                                            "lavfi",
                                            "-i",
                                            "sine=frequency=440:sample_rate=48000",
                                            "-t",
                                            "60",
                                            "-c:v",
                                            "mpeg4",
                                            "-c:a",
                                            "pcm_s16le",
                                            "-ac",
                                            "2",
                                            film},
                                           120s);
    BOOST_REQUIRE_MESSAGE(made.status == 0, made.err);
    const ProgramResult played = pulse_program(
        dir, socket, "mpv",
        {"--no-config", "--really-quiet", "--ao=pulse", "--vo=null",
         "--script=" + std::string(AUDIOD_SOURCE_DIR) + "/tests/fixtures/avsync.lua", film},
        180s);
    BOOST_REQUIRE_MESSAGE(played.status == 0, played.err << server.log());
    std::vector<double> offsets;
    const std::string marker = "avsync ";
    for (size_t at = played.err.find(marker); at != std::string::npos;
         at = played.err.find(marker, at + 1)) {
        if (played.err.compare(at + marker.size(), 5, "worst") != 0) {
            offsets.push_back(std::stod(played.err.substr(at + marker.size())));
        }
    }
    // Twice a second for a minute, less what mpv takes to start.
    BOOST_REQUIRE_MESSAGE(offsets.size() >= 100, played.err);
    const double worst = *std::max_element(offsets.begin(), offsets.end(), [](double a, double b) {
        return std::fabs(a) < std::fabs(b);
    });
    BOOST_TEST_MESSAGE("mpv's A/V offset: worst " << worst * 1000 << " ms of " << offsets.size());
    BOOST_CHECK_MESSAGE(std::fabs(worst) <= 0.020, "mpv's A/V offset reached " << worst * 1000
                                                                               << " ms:\n"
                                                                               << played.err);
}

// More players through libpulse: mplayer's, sox's and ffmpeg's pulse
// outputs each play a 1 s tone whole into a sink of its own.
BOOST_AUTO_TEST_CASE(mplayer_sox_and_ffmpeg_play_their_tone) {
    TempDir dir;
    const std::string socket = dir.file("pulse/native");
    std::string sinks;
    for (const char* name : {"mplayer", "sox", "ffmpeg"}) {
        sinks += std::string("[sinks.") + name +
                 "]\ntype = \"file\"\nformat = \"f32le\"\npath = \"" +
                 dir.file(std::string(name) + ".wav") + "\"\n";
    }
    ServerProcess server("[server]\nrt-priority = 0\n" + sinks + "[pulse]\nsocket = \"" + socket +
                         "\"\n");
    BOOST_REQUIRE_MESSAGE(serves_pulse(server), server.log());
    const std::string tone = write_tone_wav(dir.file("tone.wav"), 48000, 1000.0, 1.0);
    const std::vector<std::pair<std::string, std::vector<std::string>>> players = {
        {"mplayer", {"-really-quiet", "-noconsolecontrols", "-ao", "pulse::mplayer", tone}},
        {"sox", {"-q", tone, "-t", "pulseaudio", "sox"}},
        // ffmpeg ends its stream with a flush, not a drain: it is
        // paced (-re) and keeps 100 ms queued, so that only that is lost.
        {"ffmpeg",
         {"-nostdin", "-loglevel", "error", "-re", "-i", tone, "-f", "pulse", "-buffer_duration",
          "100", "-device", "ffmpeg", "tone"}},
    };
    for (const auto& [program, args] : players) {
        const ProgramResult played = pulse_program(dir, socket, program, args, 60s);
        BOOST_CHECK_MESSAGE(played.status == 0, program << ": " << played.err << server.log());
    }
    BOOST_REQUIRE_EQUAL(server.stop(SIGTERM), 0);
    for (const auto& [program, args] : players) {
        BOOST_TEST_CONTEXT(program) {
            const HeardTone heard =
                hear_tone(read_wav_f32(dir.file(program + ".wav")), 2, 48000, 1000.0);
            BOOST_CHECK_CLOSE(heard.frequency, 1000.0, 1.0);
            BOOST_CHECK_LE(std::fabs(heard.seconds - 1.0), 0.25);
            BOOST_CHECK_LE(heard.longest_quiet, 48000 / 4);
        }
    }
}

// Recorders through libpulse: GStreamer's pulsesrc, ffmpeg's and sox's
// pulse inputs each record a sink's monitor while a tone plays into it,
// and hear the tone at its pitch.
BOOST_AUTO_TEST_CASE(pulsesrc_ffmpeg_and_sox_record_a_monitor) {
    TempDir dir;
    const std::string socket = dir.file("pulse/native");
    ServerProcess server(pulse_config("speakers", socket));
    BOOST_REQUIRE_MESSAGE(serves_pulse(server), server.log());
    write_tone_wav(dir.file("tone.wav"), 48000, 1000.0, 60.0);
    BackgroundProgram player({installed("paplay"), dir.file("tone.wav")}, pulse_env(dir, socket));
    BOOST_REQUIRE_MESSAGE(wait_for_playing("paplay", 30s, 4800), player.errors_so_far());
    const std::vector<std::pair<std::string, std::vector<std::string>>> recorders = {
        {"gst-launch-1.0",
         {"-q", "pulsesrc", "device=speakers.monitor", "num-buffers=100", "!",
          "audio/x-raw,rate=48000,channels=2,format=S16LE", "!", "wavenc", "!", "filesink",
          "location=" + dir.file("gst-launch-1.0.wav")}},
        {"ffmpeg",
         {"-nostdin", "-loglevel", "error", "-f", "pulse", "-sample_rate", "48000", "-channels",
          "2", "-i", "speakers.monitor", "-t", "1", dir.file("ffmpeg.wav")}},
        {"sox",
         {"-q", "-t", "pulseaudio", "speakers.monitor", "-r", "48000", "-c", "2", "-b", "16",
          dir.file("sox.wav"), "trim", "0", "1"}},
    };
    for (const auto& [program, args] : recorders) {
        BOOST_TEST_CONTEXT(program) {
            const ProgramResult recorded = pulse_program(dir, socket, program, args, 60s);
            BOOST_REQUIRE_MESSAGE(recorded.status == 0, recorded.err << server.log());
            const auto s16 = read_wav_s16(dir.file(program + ".wav"));
            std::vector<float> samples(s16.size());
            std::transform(s16.begin(), s16.end(), samples.begin(),
                           [](int16_t v) { return static_cast<float>(v) / 32768.0f; });
            BOOST_REQUIRE_GE(samples.size(), size_t{48000} * 2 / 2);
            const HeardTone heard = hear_tone(samples, 2, 48000, 1000.0);
            BOOST_CHECK_CLOSE(heard.frequency, 1000.0, 1.0);
        }
    }
    ::kill(player.pid(), SIGTERM);
    player.finish();
}

// pactl move-sink-input while paplay plays is audiod's lossless move:
// between sinks of different quanta and back, every frame of the file is
// heard once, in order, split over the two sinks' recordings.
BOOST_AUTO_TEST_CASE(move_sink_input_loses_and_repeats_nothing) {
    TempDir dir;
    const std::string socket = dir.file("pulse/native");
    constexpr uint64_t frames = 48000 * 3;
    write_signal_wav(dir.file("in.wav"), "sequence", frames);
    ServerProcess server("[server]\nrt-priority = 0\ndefault-sink = \"a\"\n[sinks.a]\ntype = "
                         "\"file\"\npath = \"" +
                         dir.file("a.wav") +
                         "\"\n[sinks.b]\ntype = \"file\"\nquantum = 64\npath = \"" +
                         dir.file("b.wav") + "\"\n[pulse]\nsocket = \"" + socket + "\"\n");
    BOOST_REQUIRE_MESSAGE(serves_pulse(server), server.log());
    BackgroundProgram player({installed("paplay"), dir.file("in.wav")}, pulse_env(dir, socket));
    const auto id = wait_for_playing("paplay", 30s, 12000);
    BOOST_REQUIRE_MESSAGE(id, player.errors_so_far() << server.log());
    const std::string input = std::to_string(*id);
    BOOST_REQUIRE_EQUAL(pactl(dir, socket, {"move-sink-input", input, "b"}).status, 0);
    BOOST_CHECK(wait_for_more(*id, 12000));
    BOOST_REQUIRE_EQUAL(pactl(dir, socket, {"move-sink-input", input, "a"}).status, 0);
    const ProgramResult played = player.finish(60s);
    BOOST_REQUIRE_MESSAGE(played.status == 0, played.err << server.log());
    BOOST_REQUIRE_EQUAL(server.stop(SIGTERM), 0);
    BOOST_CHECK_EQUAL(check_split_sequence(
                          {sequence_in(dir.file("a.wav")), sequence_in(dir.file("b.wav"))}, frames),
                      3u);
}

// A libpulse program stopped (SIGSTOP) mid-stream is a stalled stream
// like any other: another program on the same sink plays on, bit-exact,
// and the stopped one plays on when it is continued.
BOOST_AUTO_TEST_CASE(a_stopped_pulse_client_disturbs_no_one) {
    TempDir dir;
    const std::string socket = dir.file("pulse/native");
    write_signal_wav(dir.file("in.wav"), "random", 48000 * 2);
    ServerProcess server(pulse_file_config(dir.file("out.wav"), socket));
    BOOST_REQUIRE_MESSAGE(serves_pulse(server), server.log());
    // Silence, so that the mix is the other program's samples alone.
    BackgroundProgram stopped({installed("pacat"), "--raw", "--format=s16le", "--rate=48000",
                               "--channels=2", "--latency-msec=50", "/dev/zero"},
                              pulse_env(dir, socket));
    const auto id = wait_for_playing("pacat", 30s, 4800);
    BOOST_REQUIRE_MESSAGE(id, stopped.errors_so_far() << server.log());
    ::kill(stopped.pid(), SIGSTOP);
    const ProgramResult played = pulse_program(dir, socket, "paplay", {dir.file("in.wav")}, 60s);
    BOOST_CHECK_MESSAGE(played.status == 0, played.err << server.log());
    BOOST_CHECK_EQUAL(run_tool("audioctl", {"info"}).status, 0);
    ::kill(stopped.pid(), SIGCONT);
    BOOST_CHECK(wait_for_more(*id, 9600));
    ::kill(stopped.pid(), SIGTERM);
    stopped.finish();
    BOOST_REQUIRE_EQUAL(server.stop(SIGTERM), 0);
    check_heard_whole(dir.file("in.wav"), dir.file("out.wav"));
}

// The TCP listener, where configured: a client that brings the user's
// cookie (made by the server where libpulse reads it) is served, one with
// another cookie is refused, and no listener is there unless asked for.
BOOST_AUTO_TEST_CASE(tcp_clients_are_served_with_the_users_cookie) {
    TempDir dir;
    const std::string socket = dir.file("pulse/native");
    // A free port: one the kernel gave, given back.
    uint16_t port = 0;
    {
        UniqueFd probe(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
        sockaddr_in address{};
        address.sin_family = AF_INET;
        address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        socklen_t length = sizeof address;
        BOOST_REQUIRE(::bind(probe.get(), reinterpret_cast<sockaddr*>(&address), length) == 0);
        BOOST_REQUIRE(::getsockname(probe.get(), reinterpret_cast<sockaddr*>(&address), &length) ==
                      0);
        port = ntohs(address.sin_port);
    }
    const std::string where = "127.0.0.1:" + std::to_string(port);
    ServerProcess server(pulse_config("speakers", socket) + "tcp = \"" + where + "\"\ncookie = \"" +
                         dir.file("pulse-cookie") + "\"\n");
    BOOST_REQUIRE_MESSAGE(serves_pulse(server), server.log());
    BOOST_REQUIRE_MESSAGE(
        eventually([&] { return server.log().find("listening tcp=") != std::string::npos; }, 10s),
        server.log());
    struct stat about {};
    BOOST_REQUIRE_EQUAL(::stat(dir.file("pulse-cookie").c_str(), &about), 0);
    BOOST_CHECK_EQUAL(about.st_size, 256);
    BOOST_CHECK_EQUAL(about.st_mode & 0777, 0600u);
    auto env = pulse_env(dir, socket);
    env["PULSE_SERVER"] = "tcp:" + where;
    env["PULSE_COOKIE"] = dir.file("pulse-cookie");
    const ProgramResult info = run_program({installed("pactl"), "info"}, 30s, env);
    BOOST_CHECK_MESSAGE(info.status == 0, info.err << server.log());
    BOOST_CHECK_EQUAL(field(info.out, "Default Sink"), "speakers");
    write_signal_wav(dir.file("in.wav"), "random", 4800);
    const ProgramResult played = run_program({installed("paplay"), dir.file("in.wav")}, 60s, env);
    BOOST_CHECK_MESSAGE(played.status == 0, played.err << server.log());
    // Another cookie: refused, and the server serves on.
    { std::ofstream(dir.file("other-cookie")) << std::string(256, 'x'); }
    env["PULSE_COOKIE"] = dir.file("other-cookie");
    const ProgramResult refused = run_program({installed("pactl"), "info"}, 30s, env);
    BOOST_CHECK_NE(refused.status, 0);
    BOOST_CHECK_MESSAGE(refused.err.find("Access denied") != std::string::npos, refused.err);
    BOOST_CHECK_EQUAL(pactl(dir, socket, {"info"}).status, 0);
}

// A client that floods the server with requests and reads none of the
// answers (a broken or hostile one) is held back, then dropped, and
// costs the others nothing: paplay beside it plays bit-exact, and
// audioctl is answered throughout.
BOOST_AUTO_TEST_CASE(a_flooding_client_starves_no_one) {
    TempDir dir;
    const std::string socket = dir.file("pulse/native");
    write_signal_wav(dir.file("in.wav"), "random", 48000 * 2);
    ServerProcess server(pulse_file_config(dir.file("out.wav"), socket));
    BOOST_REQUIRE_MESSAGE(serves_pulse(server), server.log());
    UniqueFd flooder(::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0));
    sockaddr_un address{};
    address.sun_family = AF_UNIX;
    std::strncpy(address.sun_path, socket.c_str(), sizeof address.sun_path - 1);
    BOOST_REQUIRE(::connect(flooder.get(), reinterpret_cast<sockaddr*>(&address), sizeof address) ==
                  0);
    std::vector<uint8_t> flood;
    wire::TagWriter auth;
    auth.put_u32(wire::kVersion).put_arbitrary(std::vector<uint8_t>(wire::kCookieLength, 0));
    flood = wire::command_packet(wire::Command::auth, 1, auth);
    wire::TagWriter name;
    name.put_proplist({});
    const auto named = wire::command_packet(wire::Command::set_client_name, 2, name);
    flood.insert(flood.end(), named.begin(), named.end());
    // Each asks the engine for every sink: tens of bytes in, hundreds out.
    for (uint32_t tag = 3; tag < 100000; ++tag) {
        const auto asked = wire::command_packet(wire::Command::get_sink_info_list, tag);
        flood.insert(flood.end(), asked.begin(), asked.end());
    }
    std::thread sender([&] {
        for (size_t sent = 0; sent < flood.size();) {
            const ssize_t n =
                ::send(flooder.get(), flood.data() + sent, flood.size() - sent, MSG_NOSIGNAL);
            if (n <= 0) {
                return; // dropped
            }
            sent += static_cast<size_t>(n);
        }
    });
    const ProgramResult played = pulse_program(dir, socket, "paplay", {dir.file("in.wav")}, 60s);
    BOOST_CHECK_MESSAGE(played.status == 0, played.err << server.log());
    const ProgramResult info = run_tool("audioctl", {"info"}, 10s);
    BOOST_CHECK_EQUAL(info.status, 0);
    BOOST_CHECK_LE(info.seconds, 5.0); // a sanitizer build starts slowly; starved is far longer
    // It never read a byte: once what waits for it passes the bound, it goes.
    BOOST_CHECK_MESSAGE(
        eventually(
            [&] { return server.log().find("does not read what it is sent") != std::string::npos; },
            60s),
        server.log());
    ::shutdown(flooder.get(), SHUT_RDWR);
    sender.join();
    BOOST_REQUIRE_EQUAL(server.stop(SIGTERM), 0);
    check_heard_whole(dir.file("in.wav"), dir.file("out.wav"));
}

// audiod.socket and audiod-pulse.socket both passed, as systemd passes
// them to audiod.service: audiod serves each, and leaves both to their
// manager when it ends.
BOOST_AUTO_TEST_CASE(a_passed_pulse_socket_is_served_beside_audiods_own) {
    TempDir dir;
    const std::string control = dir.file("socket");
    const std::string pulse = dir.file("native");
    { std::ofstream(dir.file("audiod.conf")) << pulse_config("speakers", dir.file("unused")); }
    BackgroundProgram server({bin("audiod-socket-launcher"), control, pulse, "--", bin("audiod"),
                              "--config", dir.file("audiod.conf"), "--state", dir.file("state")});
    BOOST_REQUIRE_MESSAGE(eventually(
                              [&] {
                                  return server.errors_so_far().find(
                                             "pulse: serving passed socket=" + pulse) !=
                                         std::string::npos;
                              },
                              20s),
                          server.errors_so_far());
    const ProgramResult info = pactl(dir, pulse, {"info"});
    BOOST_CHECK_MESSAGE(info.status == 0, info.err << server.errors_so_far());
    BOOST_CHECK_EQUAL(field(info.out, "Default Sink"), "speakers");
    const ProgramResult sinks =
        run_program({bin("audioctl"), "--socket", control, "list", "sinks"});
    BOOST_CHECK_MESSAGE(sinks.status == 0 && sinks.out.find("speakers") != std::string::npos,
                        sinks.err);
    // The configured pulse socket is not taken: the passed one is served.
    BOOST_CHECK(::access(dir.file("unused").c_str(), F_OK) != 0);
    ::kill(server.pid(), SIGTERM);
    BOOST_CHECK_EQUAL(server.finish(30s).status, 0);
    BOOST_CHECK_EQUAL(::access(pulse.c_str(), F_OK), 0);
    BOOST_CHECK_EQUAL(::access(control.c_str(), F_OK), 0);
}

// A libpulse program is an audiod application: its [apps.NAME] rule
// applies from its first frame, and audioctl's move-stream moves it (its
// client is told, as pacat -v shows).
BOOST_AUTO_TEST_CASE(app_rules_and_audioctl_moves_apply_to_pulse_streams) {
    TempDir dir;
    const std::string socket = dir.file("pulse/native");
    write_signal_wav(dir.file("in.wav"), "random", 48000 * 30);
    ServerProcess server(two_sinks_config(socket, "[apps.pacat]\nsink = \"hdmi\"\n"));
    BOOST_REQUIRE_MESSAGE(serves_pulse(server), server.log());
    BackgroundProgram player({installed("pacat"), "-v", "--file-format=wav", dir.file("in.wav")},
                             pulse_env(dir, socket));
    const auto id = wait_for_playing("pacat", 30s);
    BOOST_REQUIRE_MESSAGE(id, player.errors_so_far() << server.log());
    // The rule's sink, though libpulse asked for the default.
    BOOST_CHECK_EQUAL(stream_field(*id, "device"), "hdmi");
    const ProgramResult apps = run_tool("audioctl", {"--json", "list", "apps"});
    BOOST_CHECK_MESSAGE(apps.out.find("\"name\":\"pacat\"") != std::string::npos, apps.out);
    ctl_ok({"move-stream", std::to_string(*id), "speakers"});
    BOOST_CHECK(eventually(
        [&] {
            return player.errors_so_far().find("Stream moved to device speakers") !=
                   std::string::npos;
        },
        10s));
    BOOST_CHECK(wait_for_more(*id, 4800));
    // pactl names the sink input's sink by index: speakers' own.
    const std::string sinks = pactl(dir, socket, {"list", "short", "sinks"}).out;
    const size_t line = sinks.find("\tspeakers\t");
    BOOST_REQUIRE_MESSAGE(line != std::string::npos, sinks);
    const std::string index =
        sinks.substr(sinks.rfind('\n', line) + 1, line - (sinks.rfind('\n', line) + 1));
    const ProgramResult inputs = pactl(dir, socket, {"list", "sink-inputs"});
    BOOST_CHECK_MESSAGE(inputs.out.find("Sink: " + index + "\n") != std::string::npos,
                        index << " in\n"
                              << inputs.out);
    ::kill(player.pid(), SIGTERM);
    player.finish();
}

// `pactl load-module module-null-sink` is an audiod null sink, listed as a
// module that owns it; unloading the module closes the sink, and closing
// the sink with audioctl ends the module. Other modules are refused as
// libpulse expects of a module that does not exist.
BOOST_AUTO_TEST_CASE(load_module_null_sink_is_an_audiod_null_sink) {
    TempDir dir;
    const std::string socket = dir.file("pulse/native");
    ServerProcess server(pulse_config("speakers", socket));
    BOOST_REQUIRE_MESSAGE(serves_pulse(server), server.log());
    const ProgramResult loaded =
        pactl(dir, socket,
              {"load-module", "module-null-sink", "sink_name=virt",
               "sink_properties=device.description=Virtual", "rate=44100"});
    BOOST_REQUIRE_MESSAGE(loaded.status == 0, loaded.err << server.log());
    const std::string module = loaded.out.substr(0, loaded.out.find('\n'));
    BOOST_CHECK_EQUAL(sink_field("virt", "type"), "null");
    BOOST_CHECK_EQUAL(sink_field("virt", "rate"), "44100");
    const std::string modules = pactl(dir, socket, {"list", "modules"}).out;
    BOOST_CHECK_MESSAGE(modules.find("Module #" + module + "\n") != std::string::npos &&
                            modules.find("Name: module-null-sink") != std::string::npos,
                        modules);
    const std::string sinks = pactl(dir, socket, {"list", "sinks"}).out;
    BOOST_CHECK_MESSAGE(sinks.find("Description: Virtual") != std::string::npos &&
                            sinks.find("Owner Module: " + module + "\n") != std::string::npos,
                        sinks);
    // A name taken, an argument module-null-sink does not have, another
    // module: each refused, and the server goes on.
    const ProgramResult taken =
        pactl(dir, socket, {"load-module", "module-null-sink", "sink_name=speakers"});
    BOOST_CHECK_NE(taken.status, 0);
    BOOST_CHECK_MESSAGE(taken.err.find("Module initialization failed") != std::string::npos,
                        taken.err);
    BOOST_CHECK_NE(pactl(dir, socket, {"load-module", "module-null-sink", "color=red"}).status, 0);
    const ProgramResult other = pactl(dir, socket, {"load-module", "module-loopback"});
    BOOST_CHECK_NE(other.status, 0);
    BOOST_CHECK_MESSAGE(other.err.find("No such entity") != std::string::npos, other.err);
    BOOST_CHECK(server.log().find("module-loopback, which audiod does not have") !=
                std::string::npos);
    // Unloaded by pulse, the sink goes.
    BOOST_REQUIRE_EQUAL(pactl(dir, socket, {"unload-module", module}).status, 0);
    BOOST_CHECK_EQUAL(sink_field("virt", "type"), "");
    BOOST_CHECK_NE(pactl(dir, socket, {"unload-module", module}).status, 0);
    // Unloaded by audioctl, the module goes.
    BOOST_REQUIRE_EQUAL(
        pactl(dir, socket, {"load-module", "module-null-sink", "sink_name=virt2"}).status, 0);
    ctl_ok({"unload-sink", "virt2"});
    BOOST_CHECK(eventually(
        [&] {
            return pactl(dir, socket, {"list", "modules"}).out.find("module-null-sink") ==
                   std::string::npos;
        },
        10s));
}

// The stream-restore extension (pavucontrol's per-application volumes,
// here through libpulse's own calls) reads and writes audiod's
// per-application state: what one sets, the other shows, and a change
// made with audioctl is announced to subscribed clients.
BOOST_AUTO_TEST_CASE(stream_restore_is_audiods_per_application_state) {
    TempDir dir;
    const std::string socket = dir.file("pulse/native");
    write_signal_wav(dir.file("in.wav"), "random", 48000 * 30);
    ServerProcess server(two_sinks_config(socket));
    BOOST_REQUIRE_MESSAGE(serves_pulse(server), server.log());
    const auto restore = [&](const std::vector<std::string>& args) {
        return pulse_client(dir, socket, args);
    };
    BOOST_CHECK_EQUAL(restore({"restore-test"}).out, "1\n");
    // Written by pulse: audiod's state for paplay, before it ever played.
    const ProgramResult wrote =
        restore({"restore-write", "sink-input-by-application-name:paplay", "50", "0", "hdmi"});
    BOOST_REQUIRE_MESSAGE(wrote.status == 0, wrote.err << server.log());
    BOOST_CHECK_EQUAL(app_field("paplay", "volume"), "0.125");
    BOOST_CHECK_EQUAL(app_field("paplay", "sink"), "hdmi");
    BOOST_CHECK_EQUAL(app_field("paplay", "remembered"), "true");
    BackgroundProgram player({installed("paplay"), dir.file("in.wav")}, pulse_env(dir, socket));
    const auto id = wait_for_playing("paplay", 30s);
    BOOST_REQUIRE_MESSAGE(id, player.errors_so_far() << server.log());
    BOOST_CHECK_EQUAL(stream_field(*id, "device"), "hdmi");
    // Set by audioctl: read by pulse, and announced.
    BackgroundProgram watcher({bin("audiod-pulse-client"), "restore-watch", "1"},
                              pulse_env(dir, socket));
    BOOST_REQUIRE(eventually(
        [&] { return watcher.output_so_far().find("subscribed") != std::string::npos; }, 20s));
    ctl_ok({"mute", "app:paplay"});
    const ProgramResult watched = watcher.finish(30s);
    BOOST_CHECK_MESSAGE(watched.out.find("event") != std::string::npos, watched.err);
    const ProgramResult read = restore({"restore-read"});
    BOOST_CHECK_MESSAGE(read.out.find("sink-input-by-application-name:paplay volume=50 muted=1 "
                                      "device=hdmi\n") != std::string::npos,
                        read.out << read.err);
    // A device that is not there is refused, and nothing of the entry is
    // applied.
    BOOST_CHECK_NE(
        restore({"restore-write", "sink-input-by-application-name:paplay", "100", "0", "nowhere"})
            .status,
        0);
    BOOST_CHECK_EQUAL(app_field("paplay", "volume"), "0.125");
    // Entries of other kinds are kept as written; deleted, gone.
    BOOST_REQUIRE_EQUAL(
        restore({"restore-write", "sink-input-by-media-role:event", "80", "0"}).status, 0);
    BOOST_CHECK(
        restore({"restore-read"}).out.find("sink-input-by-media-role:event volume=80 muted=0") !=
        std::string::npos);
    BOOST_REQUIRE_EQUAL(restore({"restore-delete", "sink-input-by-media-role:event"}).status, 0);
    BOOST_CHECK(restore({"restore-read"}).out.find("media-role") == std::string::npos);
    // Deleting an application's entry forgets what was set for it.
    BOOST_REQUIRE_EQUAL(restore({"restore-delete", "sink-input-by-application-name:paplay"}).status,
                        0);
    BOOST_CHECK_EQUAL(app_field("paplay", "remembered"), "false");
    BOOST_CHECK_EQUAL(app_field("paplay", "volume"), "1");
    // Extensions audiod does not have answer as libpulse expects.
    BOOST_CHECK_EQUAL(restore({"device-restore"}).out, "No such extension\n");
    ::kill(player.pid(), SIGTERM);
    player.finish();
}

// The sample cache, as libcanberra's event sounds use it (here through
// pactl): a sample uploaded once plays whole on a sink, bit-exact, even
// after the client that asked for it has gone; it is listed until removed.
BOOST_AUTO_TEST_CASE(an_uploaded_sample_plays_bit_exact_until_removed) {
    TempDir dir;
    const std::string socket = dir.file("pulse/native");
    write_signal_wav(dir.file("click.wav"), "random", 4800);
    ServerProcess server(pulse_file_config(dir.file("out.wav"), socket));
    BOOST_REQUIRE_MESSAGE(serves_pulse(server), server.log());
    const ProgramResult uploaded =
        pactl(dir, socket, {"upload-sample", dir.file("click.wav"), "click"});
    BOOST_REQUIRE_MESSAGE(uploaded.status == 0, uploaded.err << server.log());
    const std::string listed = pactl(dir, socket, {"list", "samples"}).out;
    BOOST_CHECK_MESSAGE(listed.find("Name: click") != std::string::npos, listed);
    // pactl leaves as soon as the server says the sample plays.
    BOOST_REQUIRE_EQUAL(pactl(dir, socket, {"play-sample", "click", "out"}).status, 0);
    BOOST_REQUIRE(eventually([&] { return sink_field("out", "streams") == "0"; }, 30s));
    // A long one, killed as pavucontrol kills a sink input: it ends.
    write_signal_wav(dir.file("long.wav"), "random", 48000 * 20); // 7.7 MB as pactl sends it
    BOOST_REQUIRE_EQUAL(pactl(dir, socket, {"upload-sample", dir.file("long.wav"), "long"}).status,
                        0);
    BOOST_REQUIRE_EQUAL(pactl(dir, socket, {"play-sample", "long", "out"}).status, 0);
    const auto long_id = wait_for_playing("pactl", 30s, 4800);
    BOOST_REQUIRE(long_id);
    BOOST_CHECK_EQUAL(
        pulse_client(dir, socket, {"kill-sink-input", std::to_string(*long_id)}).status, 0);
    BOOST_CHECK(eventually([&] { return sink_field("out", "streams") == "0"; }, 10s));
    BOOST_CHECK_NE(pactl(dir, socket, {"play-sample", "nothing"}).status, 0);
    BOOST_REQUIRE_EQUAL(pactl(dir, socket, {"remove-sample", "click"}).status, 0);
    BOOST_CHECK(pactl(dir, socket, {"list", "samples"}).out.find("click") == std::string::npos);
    BOOST_CHECK_NE(pactl(dir, socket, {"play-sample", "click"}).status, 0);
    BOOST_REQUIRE_EQUAL(server.stop(SIGTERM), 0);
    check_heard_whole(dir.file("click.wav"), dir.file("out.wav"));
}

// pavucontrol's "Terminate" on a playing and a recording stream: each
// program is told its stream was killed and ends; others play on.
BOOST_AUTO_TEST_CASE(killed_streams_end_their_programs) {
    TempDir dir;
    const std::string socket = dir.file("pulse/native");
    write_signal_wav(dir.file("in.wav"), "random", 48000 * 30);
    ServerProcess server(pulse_config("speakers", socket));
    BOOST_REQUIRE_MESSAGE(serves_pulse(server), server.log());
    BackgroundProgram player({installed("paplay"), dir.file("in.wav")}, pulse_env(dir, socket));
    BackgroundProgram recorder({installed("parec"), "-d", "speakers.monitor", "/dev/null"},
                               pulse_env(dir, socket));
    const auto played = wait_for_playing("paplay", 30s);
    const auto recorded = wait_for_playing("parec", 30s);
    BOOST_REQUIRE_MESSAGE(played && recorded, player.errors_so_far()
                                                  << recorder.errors_so_far() << server.log());
    BOOST_CHECK_NE(
        pulse_client(dir, socket, {"kill-source-output", std::to_string(*played)}).status, 0);
    const ProgramResult killed =
        pulse_client(dir, socket, {"kill-source-output", std::to_string(*recorded)});
    BOOST_CHECK_MESSAGE(killed.status == 0, killed.err);
    const ProgramResult parec = recorder.finish(30s);
    BOOST_CHECK_NE(parec.status, 0);
    BOOST_CHECK_MESSAGE(parec.err.find("killed") != std::string::npos, parec.err);
    BOOST_CHECK(wait_for_more(*played, 4800)); // the player heard nothing of it
    BOOST_REQUIRE_EQUAL(
        pulse_client(dir, socket, {"kill-sink-input", std::to_string(*played)}).status, 0);
    const ProgramResult paplay = player.finish(30s);
    BOOST_CHECK_NE(paplay.status, 0);
    BOOST_CHECK_MESSAGE(paplay.err.find("killed") != std::string::npos, paplay.err);
    BOOST_CHECK(eventually([&] { return sink_field("speakers", "streams") == "0"; }, 10s));
}

namespace {

// The loudest left sample of a second that parec records from `source`
// (s16 stereo), past its first 0.1 s; -1 if it did not record.
int loudest_recorded(const TempDir& dir, const std::string& socket, const std::string& source) {
    BackgroundProgram recorder({installed("parec"), "-d", source, "--raw", "--format=s16le",
                                "--rate=48000", "--channels=2"},
                               pulse_env(dir, socket));
    const size_t second = 48000 * 4;
    const bool recorded =
        eventually([&] { return recorder.output_so_far().size() >= second; }, 30s);
    const std::string bytes = recorder.output_so_far();
    ::kill(recorder.pid(), SIGINT);
    recorder.finish(30s);
    if (!recorded) {
        return -1;
    }
    int loudest = 0;
    for (size_t at = 4800 * 4; at + 4 <= std::min(second, bytes.size()); at += 4) {
        int16_t left = 0;
        std::memcpy(&left, bytes.data() + at, sizeof left);
        loudest = std::max(loudest, std::abs(static_cast<int>(left)));
    }
    return loudest;
}

} // namespace

// A capture source's volume and mute (pavucontrol's input tab, a
// microphone-mute key) are the engine's own, shared with `audioctl
// set-volume source:NAME`; a monitor's level is its sink's.
BOOST_AUTO_TEST_CASE(a_sources_volume_and_mute_change_what_is_recorded_from_it) {
    TempDir dir;
    const std::string socket = dir.file("pulse/native");
    use_test_card(dir); // "hears" the sequence: left counts 1..30000
    ServerProcess server("[server]\nrt-priority = 0\n[sinks.speakers]\ntype = \"null\"\n"
                         "[sources.mic]\ntype = \"alsa\"\ndevice = \"testcard\"\nperiods = 16\n"
                         "[pulse]\nsocket = \"" +
                         socket + "\"\n");
    BOOST_REQUIRE_MESSAGE(serves_pulse(server), server.log());

    const int whole = loudest_recorded(dir, socket, "mic");
    BOOST_CHECK_GT(whole, 29000);
    BOOST_REQUIRE_EQUAL(pactl(dir, socket, {"set-source-volume", "mic", "0.5"}).status, 0);
    const int half = loudest_recorded(dir, socket, "mic");
    BOOST_CHECK_MESSAGE(half > 14000 && half < 15500, half);
    const ProgramResult listed = pactl(dir, socket, {"list", "sources"});
    BOOST_CHECK_MESSAGE(listed.out.find("52016 /  79% / -6.02 dB") != std::string::npos,
                        listed.out);
    // What audioctl shows (pulse volumes are cubic: 0.5 comes back within
    // a pulse volume step).
    BOOST_CHECK_CLOSE(std::stod(source_field("mic", "volume")), 0.5, 0.01);
    BOOST_REQUIRE_EQUAL(pactl(dir, socket, {"set-source-mute", "mic", "1"}).status, 0);
    BOOST_CHECK_EQUAL(loudest_recorded(dir, socket, "mic"), 0);
    BOOST_CHECK_NE(pactl(dir, socket, {"list", "sources"}).out.find("Mute: yes"),
                   std::string::npos);
    BOOST_CHECK_EQUAL(source_field("mic", "muted"), "true");

    // audioctl changes the same level.
    BOOST_REQUIRE_EQUAL(run_tool("audioctl", {"mute", "source:mic", "off"}).status, 0);
    BOOST_REQUIRE_EQUAL(run_tool("audioctl", {"set-volume", "source:mic", "100%"}).status, 0);
    BOOST_CHECK_GT(loudest_recorded(dir, socket, "mic"), 29000);
    BOOST_CHECK_EQUAL(pactl(dir, socket, {"list", "sources"}).out.find("Mute: yes"),
                      std::string::npos);

    // A monitor records what its sink plays: its level is the sink's.
    const ProgramResult monitor =
        pactl(dir, socket, {"set-source-volume", "speakers.monitor", "50%"});
    BOOST_CHECK_EQUAL(monitor.status, 1);
    BOOST_CHECK_MESSAGE(monitor.err.find("Not supported") != std::string::npos, monitor.err);
    const ProgramResult ctl = run_tool("audioctl", {"mute", "source:speakers.monitor"});
    BOOST_CHECK_MESSAGE(
        ctl.err.find("its level is the sink's (sink:speakers)") != std::string::npos, ctl.err);

    // Suspended, the card is closed; resumed, it is heard again. pactl and
    // audioctl suspend and resume alike.
    BOOST_REQUIRE_EQUAL(pactl(dir, socket, {"suspend-source", "mic", "1"}).status, 0);
    BOOST_CHECK_EQUAL(source_field("mic", "state"), "suspended");
    BOOST_REQUIRE_EQUAL(run_tool("audioctl", {"resume", "mic"}).status, 0);
    BOOST_CHECK(eventually([] { return source_field("mic", "state") == "running"; }, 10s));
    BOOST_REQUIRE_EQUAL(run_tool("audioctl", {"suspend", "mic"}).status, 0);
    BOOST_CHECK_NE(pactl(dir, socket, {"list", "short", "sources"}).out.find("SUSPENDED"),
                   std::string::npos);
    BOOST_REQUIRE_EQUAL(pactl(dir, socket, {"suspend-source", "mic", "0"}).status, 0);
    BOOST_CHECK(eventually([] { return source_field("mic", "state") == "running"; }, 10s));
    BOOST_CHECK_GT(loudest_recorded(dir, socket, "mic"), 29000);
    BOOST_CHECK_EQUAL(server.stop(SIGTERM), 0);
}

// pavucontrol's "set as fallback" on an input: the engine's default
// source, which every record stream that names none records (libpulse's
// and libaudiod's alike), remembered across restarts.
BOOST_AUTO_TEST_CASE(the_default_source_is_chosen_by_pactl_and_remembered) {
    TempDir dir;
    TempDir server_dir;
    const std::string socket = dir.file("pulse/native");
    use_test_card(dir); // the mic "hears" the sequence; nothing plays
    const std::string config =
        "[server]\nrt-priority = 0\n[sinks.speakers]\ntype = \"null\"\n"
        "[sources.mic]\ntype = \"alsa\"\ndevice = \"testcard\"\nperiods = 16\n"
        "[pulse]\nsocket = \"" +
        socket + "\"\n";
    {
        ServerProcess server(config, server_dir.path());
        BOOST_REQUIRE_MESSAGE(serves_pulse(server), server.log());
        BOOST_CHECK_EQUAL(field(pactl(dir, socket, {"info"}).out, "Default Source"),
                          "speakers.monitor");
        BOOST_CHECK_EQUAL(loudest_recorded(dir, socket, "@DEFAULT_SOURCE@"), 0);
        BackgroundProgram watch({installed("pactl"), "subscribe"}, pulse_env(dir, socket));
        BOOST_REQUIRE(eventually(
            [&] {
                return pactl(dir, socket, {"list", "short", "clients"}).out.find("pactl") !=
                       std::string::npos;
            },
            30s));
        BOOST_REQUIRE_EQUAL(pactl(dir, socket, {"set-default-source", "mic"}).status, 0);
        BOOST_CHECK_EQUAL(field(pactl(dir, socket, {"info"}).out, "Default Source"), "mic");
        BOOST_CHECK_EQUAL(field(run_tool("audioctl", {"info"}).out, "default source"), "mic");
        BOOST_CHECK_EQUAL(source_field("mic", "default"), "true");
        BOOST_CHECK(eventually(
            [&] {
                return watch.output_so_far().find("Event 'change' on server") != std::string::npos;
            },
            30s));
        ::kill(watch.pid(), SIGTERM);
        watch.finish(30s);
        BOOST_CHECK_GT(loudest_recorded(dir, socket, "@DEFAULT_SOURCE@"), 29000);
        const ProgramResult none = pactl(dir, socket, {"set-default-source", "nosuch"});
        BOOST_CHECK_NE(none.status, 0);
        BOOST_CHECK_MESSAGE(none.err.find("No such entity") != std::string::npos, none.err);
        // audioctl chooses the same default.
        BOOST_REQUIRE_EQUAL(run_tool("audioctl", {"set-default-source", "speakers.monitor"}).status,
                            0);
        BOOST_CHECK_EQUAL(field(pactl(dir, socket, {"info"}).out, "Default Source"),
                          "speakers.monitor");
        const ProgramResult wrong = run_tool("audioctl", {"set-default-source", "nosuch"});
        BOOST_CHECK_MESSAGE(wrong.err.find("no source named 'nosuch'") != std::string::npos,
                            wrong.err);
        BOOST_REQUIRE_EQUAL(pactl(dir, socket, {"set-default-source", "mic"}).status, 0);
        BOOST_CHECK_EQUAL(server.stop(SIGTERM), 0);
    }
    // Remembered; and a libaudiod recorder that names no source records it
    // too.
    ServerProcess again(config, server_dir.path());
    BOOST_REQUIRE_MESSAGE(serves_pulse(again), again.log());
    BOOST_CHECK_EQUAL(field(pactl(dir, socket, {"info"}).out, "Default Source"), "mic");
    const ProgramResult rec =
        run_tool("audiorec", {"--quiet", "--duration", "1", dir.file("r.wav")});
    BOOST_REQUIRE_MESSAGE(rec.status == 0, rec.err);
    const auto recorded = read_wav_s16(dir.file("r.wav"));
    BOOST_CHECK_GT(
        std::count_if(recorded.begin(), recorded.end(), [](int16_t v) { return v > 1000; }), 1000);
    BOOST_CHECK_EQUAL(again.stop(SIGTERM), 0);
}

// pasuspender closes every sink (and capture source) while the program it
// runs uses the sound card itself, and opens them again after; pactl
// suspends one. A suspended sink's streams play elsewhere meanwhile, or
// wait where there is nowhere else, and come back when it is resumed.
BOOST_AUTO_TEST_CASE(pasuspender_and_suspend_sink_close_sinks_and_their_streams_come_back) {
    TempDir dir;
    const std::string socket = dir.file("pulse/native");
    ServerProcess server(two_sinks_config(socket));
    BOOST_REQUIRE_MESSAGE(serves_pulse(server), server.log());
    BackgroundProgram player({installed("pacat"), "--raw", "--device=speakers", "/dev/zero"},
                             pulse_env(dir, socket));
    const auto id = wait_for_playing("pacat", 30s, 4800);
    BOOST_REQUIRE_MESSAGE(id, player.errors_so_far() << server.log());

    // One sink: its stream goes to the other, and back.
    BOOST_REQUIRE_EQUAL(pactl(dir, socket, {"suspend-sink", "speakers", "1"}).status, 0);
    BOOST_CHECK_EQUAL(sink_field("speakers", "state"), "suspended");
    BOOST_CHECK_NE(pactl(dir, socket, {"list", "short", "sinks"}).out.find("SUSPENDED"),
                   std::string::npos);
    BOOST_CHECK(eventually([&] { return stream_field(*id, "device") == "hdmi"; }, 10s));
    BOOST_CHECK(wait_for_more(*id, 4800));
    const ProgramResult chosen = run_tool("audioctl", {"set-default-sink", "speakers"});
    BOOST_CHECK_MESSAGE(chosen.err.find("sink 'speakers' is suspended") != std::string::npos,
                        chosen.err);
    BOOST_REQUIRE_EQUAL(pactl(dir, socket, {"suspend-sink", "speakers", "0"}).status, 0);
    BOOST_CHECK(eventually([&] { return sink_field("speakers", "state") == "running"; }, 10s));
    BOOST_CHECK(eventually([&] { return stream_field(*id, "device") == "speakers"; }, 10s));

    // Every sink, while the program runs: the stream waits, then goes on.
    const ProgramResult suspended = pulse_program(
        dir, socket, "pasuspender", {"--", bin("audioctl"), "--json", "list", "sinks"});
    BOOST_REQUIRE_MESSAGE(suspended.status == 0, suspended.err << server.log());
    size_t closed = 0;
    for (size_t at = 0;
         (at = suspended.out.find("\"state\":\"suspended\"", at)) != std::string::npos; ++at) {
        ++closed;
    }
    BOOST_CHECK_MESSAGE(closed == 2, suspended.out);
    BOOST_CHECK(eventually(
        [&] {
            return sink_field("speakers", "state") == "running" &&
                   sink_field("hdmi", "state") == "running";
        },
        10s));
    BOOST_CHECK(eventually([&] { return stream_field(*id, "device") == "speakers"; }, 10s));
    BOOST_CHECK(wait_for_more(*id, 4800));
    BOOST_CHECK_NE(server.log().find("sink speakers suspended"), std::string::npos);

    // A new player while every sink is suspended is told so at once (it
    // would otherwise wait for as long as nobody resumes one).
    write_tone_wav(dir.file("t.wav"), 48000, 440, 0.2);
    BOOST_REQUIRE_EQUAL(pactl(dir, socket, {"suspend-sink", "speakers", "1"}).status, 0);
    BOOST_REQUIRE_EQUAL(pactl(dir, socket, {"suspend-sink", "hdmi", "1"}).status, 0);
    const ProgramResult refused = pulse_program(dir, socket, "paplay", {dir.file("t.wav")});
    BOOST_CHECK_NE(refused.status, 0);
    BOOST_CHECK_MESSAGE(refused.err.find("busy") != std::string::npos, refused.err);
    const ProgramResult told = run_tool("audioplay", {"--quiet", dir.file("t.wav")});
    BOOST_CHECK_MESSAGE(told.err.find("every sink is suspended") != std::string::npos, told.err);
    BOOST_REQUIRE_EQUAL(pactl(dir, socket, {"suspend-sink", "hdmi", "0"}).status, 0);
    const ProgramResult played = pulse_program(dir, socket, "paplay", {dir.file("t.wav")});
    BOOST_CHECK_MESSAGE(played.status == 0, played.err);
    ::kill(player.pid(), SIGTERM);
    player.finish(30s);
    BOOST_CHECK_EQUAL(server.stop(SIGTERM), 0);
}

BOOST_AUTO_TEST_SUITE_END()
