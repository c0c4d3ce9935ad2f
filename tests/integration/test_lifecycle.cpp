// The server as a process: configuration errors, one server per socket,
// stale sockets, clean and unclean stops, the tools' --help, and what a
// client keeps of a server that died.
#include "audiod/audiod.h"
#include "common/audio_file.h"
#include "fixtures/fixture_signals.h"
#include "helpers.h"

#include <boost/test/unit_test.hpp>

#include <cstring>
#include <optional>

#include <csignal>
#include <fcntl.h>
#include <fstream>
#include <sys/stat.h>
#include <thread>
#include <unistd.h>

using namespace audiod;
using namespace audiod::test;
using namespace std::chrono_literals;

namespace {

struct DataChunk {
    uint64_t offset = 0;   // of its first sample byte
    uint64_t declared = 0; // its size as the header says
};

// Finds a RIFF/WAVE file's data chunk by walking its chunks.
std::optional<DataChunk> data_chunk(const std::string& bytes) {
    const auto u32_at = [&](size_t at) {
        uint32_t v = 0;
        std::memcpy(&v, bytes.data() + at, 4);
        return v;
    };
    if (bytes.size() < 12 || bytes.compare(0, 4, "RIFF") != 0 || bytes.compare(8, 4, "WAVE") != 0) {
        return std::nullopt;
    }
    for (size_t at = 12; at + 8 <= bytes.size();) {
        const uint32_t size = u32_at(at + 4);
        if (bytes.compare(at, 4, "data") == 0) {
            return DataChunk{at + 8, size};
        }
        at += 8 + size + (size & 1);
    }
    return std::nullopt;
}

} // namespace

BOOST_AUTO_TEST_SUITE(lifecycle)

BOOST_AUTO_TEST_CASE(bad_config_is_refused_with_file_line_and_reason) {
    TempDir dir;
    const std::string conf = dir.file("bad.conf");
    std::ofstream(conf) << "[server]\nrate = 48000\n\nquantum = \"lots\"\n[sinks.a]\ntype = "
                           "\"null\"\n";
    const ProgramResult r = run_program({bin("audiod"), "--config", conf}, 10s,
                                        {{"AUDIOD_SOCKET", dir.file("socket")}});
    BOOST_CHECK_EQUAL(r.status, 1);
    BOOST_CHECK_MESSAGE(r.err.find(conf + ":4: quantum must be an integer") != std::string::npos,
                        r.err);
    // Nothing was left listening.
    BOOST_CHECK(::access(dir.file("socket").c_str(), F_OK) != 0);

    // A sink whose module rejects its options is refused too, naming the sink.
    std::ofstream(conf) << "[sinks.rec]\ntype = \"file\"\ncolour = \"blue\"\n";
    const ProgramResult r2 = run_program({bin("audiod"), "--config", conf}, 10s,
                                         {{"AUDIOD_SOCKET", dir.file("socket")}});
    BOOST_CHECK_EQUAL(r2.status, 1);
    BOOST_CHECK_MESSAGE(r2.err.find("sink 'rec'") != std::string::npos &&
                            r2.err.find("colour") != std::string::npos,
                        r2.err);

    std::ofstream(conf) << "[sinks.x]\ntype = \"warp-drive\"\n";
    const ProgramResult r3 = run_program({bin("audiod"), "--config", conf}, 10s,
                                         {{"AUDIOD_SOCKET", dir.file("socket")}});
    BOOST_CHECK_EQUAL(r3.status, 1);
    BOOST_CHECK_MESSAGE(r3.err.find("unknown sink type 'warp-drive'") != std::string::npos, r3.err);
}

BOOST_AUTO_TEST_CASE(one_server_per_socket_and_stale_sockets_reclaimed) {
    TempDir dir;
    const std::string config = "[sinks.a]\ntype = \"null\"\n";
    auto first = std::make_unique<ServerProcess>(config, dir.path());
    const ProgramResult second = run_program({bin("audiod"), "--config", dir.file("audiod.conf")},
                                             10s, {{"AUDIOD_SOCKET", first->socket()}});
    BOOST_CHECK_EQUAL(second.status, 1);
    BOOST_CHECK_MESSAGE(second.err.find("already serving") != std::string::npos, second.err);
    BOOST_CHECK_EQUAL(run_tool("audioctl", {"info"}).status, 0); // the first is unharmed

    // A crash leaves the socket file behind; the next server takes it over.
    BOOST_CHECK_EQUAL(first->stop(SIGKILL), 128 + SIGKILL);
    struct stat st {};
    BOOST_REQUIRE(::stat(first->socket().c_str(), &st) == 0);
    BOOST_CHECK(S_ISSOCK(st.st_mode));
    first.reset();
    ServerProcess third(config, dir.path());
    const ProgramResult info = run_tool("audioctl", {"info"});
    BOOST_CHECK_EQUAL(info.status, 0);
    BOOST_CHECK_EQUAL(third.stop(SIGTERM), 0);
    // A clean stop removes the socket.
    BOOST_CHECK(::access(third.socket().c_str(), F_OK) != 0);
}

BOOST_AUTO_TEST_CASE(sigint_stops_cleanly) {
    TempDir dir;
    ServerProcess server(file_sink_config(dir.file("out.wav")));
    // The sink's clock has run: it has written silence.
    BOOST_REQUIRE(eventually([] { return sink_number("out", "frames") > 0; }, 30s));
    BOOST_CHECK_EQUAL(server.stop(SIGINT), 0);
    const auto out = read_wav_s16(dir.file("out.wav"));
    BOOST_CHECK_GT(out.size(), 0u); // that silence is in the file
}

BOOST_AUTO_TEST_CASE(wav_is_readable_up_to_the_last_flush_after_a_crash) {
    TempDir dir;
    const std::string wav = dir.file("out.wav");
    ServerProcess server(file_sink_config(wav));
    // A second of buffer, so that a client held up on a loaded machine does
    // not underrun.
    BackgroundProgram client({bin("audiod-test-client"), "--signal", "sequence", "--app", "writer",
                              "--frames", "480000", "--latency-ms", "1000"});
    const auto first_id = wait_for_app_stream("writer");
    BOOST_REQUIRE_MESSAGE(first_id, "no stream; " << why_no_stream(client, server));
    // By its application: should the loaded server stand still for 500 ms,
    // libaudiod keeps the client's clock and plays on in a new stream (two
    // stress passes saw the first one end before it had played 1.5 s).
    const auto id = wait_for_playing("writer", 30s, 72000);
    BOOST_REQUIRE_MESSAGE(id, "the writer never played 1.5 s; " << why_no_stream(client, server));
    BOOST_CHECK_EQUAL(server.stop(SIGKILL), 128 + SIGKILL);
    ::kill(client.pid(), SIGKILL); // it would play on, on its own clock, to its end
    client.finish(30s);

    // At least about a second made it to disk, and every frame there is the
    // sequence in order: the header never claims more than was written.
    // Each frame follows the one before, unless the stream was re-created,
    // when what the client's clock consumed meanwhile is missing.
    const Heard heard = hear_sequence(wav);
    BOOST_CHECK_GT(heard.values.size(), 48000u / 2);
    BOOST_CHECK(heard.increasing);
    if (*id == *first_id) {
        BOOST_CHECK_EQUAL(sequence_jumps(heard), 0u);
    }
    // And the header's data size, as flushed, is within the file: it never
    // claims more than was written.
    const auto data = data_chunk(file_contents(wav));
    BOOST_REQUIRE_MESSAGE(data, "no data chunk in " << wav);
    BOOST_CHECK_GT(data->declared, 0u);
    BOOST_CHECK_LE(data->offset + data->declared, file_contents(wav).size());
}

BOOST_AUTO_TEST_CASE(every_tool_explains_itself) {
    for (const char* tool : {"audiod", "audioplay", "audiorec", "audioctl"}) {
        const ProgramResult help = run_tool(tool, {"--help"});
        BOOST_CHECK_EQUAL(help.status, 0);
        BOOST_CHECK_MESSAGE(help.out.find("Usage: ") == 0, tool);
        BOOST_CHECK_MESSAGE(help.out.find("Exit status") != std::string::npos, tool);
        const ProgramResult bad = run_tool(tool, {"--no-such-option"});
        BOOST_CHECK_EQUAL(bad.status, 2);
        BOOST_CHECK(bad.err.find("--help") != std::string::npos);
    }
}

BOOST_AUTO_TEST_CASE(clients_report_a_missing_server_at_once) {
    TempDir dir;
    const std::map<std::string, std::string> env{{"AUDIOD_SOCKET", dir.file("none")}};
    const ProgramResult ctl = run_program({bin("audioctl"), "info"}, 10s, env);
    BOOST_CHECK_EQUAL(ctl.status, 1);
    BOOST_CHECK_MESSAGE(ctl.err.find("no audiod server is running") != std::string::npos, ctl.err);
    const ProgramResult play = run_program({bin("audioplay"), "--tone", "440"}, 10s, env);
    BOOST_CHECK_EQUAL(play.status, 1);
    BOOST_CHECK_LT(play.seconds, 5.0);
}

// A stream's wake-up descriptor is the player's alone: a program the
// player starts must not inherit it, from the stream's creation on, and
// after the stream is made anew on a restarted server. (It did inherit
// it: dup2 cleared close-on-exec, and every server the soak started
// after a restart held each of the soak's recordings' descriptors.)
BOOST_AUTO_TEST_CASE(a_streams_descriptor_stays_close_on_exec_across_a_restart) {
    TempDir dir;
    const std::string config = "[server]\nrt-priority = 0\n[sinks.a]\ntype = \"null\"\n";
    auto first = std::make_unique<ServerProcess>(config, dir.path());
    audiod_context* ctx = nullptr;
    BOOST_REQUIRE_EQUAL(audiod_connect("close-on-exec", 5000, &ctx), 0);
    audiod_stream_params params;
    audiod_stream_params_init(&params);
    audiod_stream* stream = nullptr;
    BOOST_REQUIRE_EQUAL(audiod_stream_create(ctx, &params, &stream), 0);
    const auto close_on_exec = [&] {
        return (::fcntl(audiod_stream_fd(stream), F_GETFD) & FD_CLOEXEC) != 0;
    };
    BOOST_CHECK(close_on_exec());
    const unsigned generation = audiod_stream_fd_generation(stream);
    BOOST_REQUIRE_EQUAL(first->stop(SIGKILL), 128 + SIGKILL);
    first.reset();
    ServerProcess second(config, dir.path());
    // The stream keeps its clock meanwhile, and its supervisor makes it
    // anew on the new server as soon as that answers.
    static int16_t silence[480 * 2];
    BOOST_REQUIRE(eventually(
        [&] {
            (void)audiod_stream_write(stream, silence, 480, 0);
            return audiod_stream_fd_generation(stream) != generation;
        },
        30s));
    BOOST_CHECK(close_on_exec());
    audiod_stream_close(stream);
    audiod_disconnect(ctx);
}

BOOST_AUTO_TEST_SUITE_END()
