// audiorec: records from an audiod source into a WAV or FLAC file (or raw samples
// on standard output) until a duration has passed or it is interrupted.
#include "audiod/audiod.h"
#include "cli.h"
#include "common/audio_file.h"
#include "protocol/sample_format.h"
#include "realtime.h"

#include <atomic>
#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <getopt.h>
#include <optional>
#include <string>
#include <unistd.h>
#include <vector>

namespace {

constexpr const char* kProgram = "audiorec";

const std::string kUsage = R"(Usage: audiorec [OPTION]... FILE.wav|FILE.flac|-
Record from the audiod sound server into a WAV or FLAC file (by the name's
ending; anything but .flac is WAV), or as raw samples to
standard output with '-', until --duration has passed or audiorec is
interrupted (Ctrl-C, SIGTERM); the file is complete either way. FLAC holds
up to 24 bits: s32le and f32le recordings are stored in 24.

Options:
  -s, --source NAME      record from source NAME (see 'audioctl list
                         sources'); default: the default sink's monitor,
                         i.e. what the default sink plays.
      --format F         u8, s16le (default), s24le, s24_3le, s32le or f32le
      --rate R           frames per second, 8000..192000 (default: the
                         server's rate)
      --channels C       1..8 (default: the server's channel count)
  -d, --duration SECONDS stop after this much audio (default: until
                         interrupted).
  -a, --app NAME         application name (default: audiorec).
  -l, --latency-ms N     buffer N milliseconds (default 200). A reader later
                         than that loses the oldest audio (an overrun).
)" + std::string(audiod::cli::kRealtimeHelp) +
                           R"(  -q, --quiet            print nothing but errors.
  -h, --help             show this help and exit.
      --version          show the version and exit.

The server converts to the format, rate and channel count asked for. If the
server stops or dies while recording, audiorec goes on at the same pace,
recording silence, and picks the source up again when a server is back.

Exit status: 0 when the recording is complete (also when interrupted), 1 on
an error (no server, no such source, the file cannot be written), 2 on a
usage error.
)";

std::atomic<bool> g_interrupted{false};

void on_signal(int) {
    g_interrupted.store(true);
}

struct Options {
    std::string source;
    std::string app = "audiorec";
    std::string format = "s16le";
    uint32_t rate = 0;
    uint32_t channels = 0;
    std::optional<double> duration_s;
    uint32_t latency_ms = 200;
    bool quiet = false;
    std::optional<int> realtime; // --realtime: the priority, 0 = the default
    std::string output;
};

Options parse_options(int argc, char** argv) {
    enum { kFormat = 1000, kRate, kChannels, kVersion };
    const option long_options[] = {
        {"source", required_argument, nullptr, 's'},
        {"format", required_argument, nullptr, kFormat},
        {"rate", required_argument, nullptr, kRate},
        {"channels", required_argument, nullptr, kChannels},
        {"duration", required_argument, nullptr, 'd'},
        {"app", required_argument, nullptr, 'a'},
        {"latency-ms", required_argument, nullptr, 'l'},
        {"realtime", optional_argument, nullptr, 'r'},
        {"quiet", no_argument, nullptr, 'q'},
        {"help", no_argument, nullptr, 'h'},
        {"version", no_argument, nullptr, kVersion},
        {nullptr, 0, nullptr, 0},
    };
    Options o;
    for (;;) {
        const int c = getopt_long(argc, argv, "s:d:a:l:r::qh", long_options, nullptr);
        if (c == -1) {
            break;
        }
        switch (c) {
        case 's':
            o.source = optarg;
            break;
        case kFormat:
            if (!audiod::parse_format(optarg)) {
                audiod::cli::usage_error(kProgram, std::string("unknown format '") + optarg + "'");
            }
            o.format = optarg;
            break;
        case kRate:
            o.rate =
                audiod::cli::parse_uint(kProgram, optarg, "rate", AUDIOD_MIN_RATE, AUDIOD_MAX_RATE);
            break;
        case kChannels:
            o.channels =
                audiod::cli::parse_uint(kProgram, optarg, "channel count", 1, AUDIOD_MAX_CHANNELS);
            break;
        case 'd':
            o.duration_s = audiod::cli::parse_double(kProgram, optarg, "duration", 0.0, 1e7);
            break;
        case 'a':
            o.app = optarg;
            break;
        case 'l':
            o.latency_ms =
                audiod::cli::parse_uint(kProgram, optarg, "latency", 1, AUDIOD_MAX_LATENCY_MS);
            break;
        case 'r':
            o.realtime = audiod::cli::parse_realtime_priority(kProgram, optarg);
            break;
        case 'q':
            o.quiet = true;
            break;
        case 'h':
            std::fputs(kUsage.c_str(), stdout);
            std::exit(0);
        case kVersion:
            std::printf("audiorec %s\n", audiod_version());
            std::exit(0);
        default:
            std::fputs("Try 'audiorec --help' for more information.\n", stderr);
            std::exit(2);
        }
    }
    if (optind + 1 != argc) {
        audiod::cli::usage_error(kProgram, optind >= argc
                                               ? "no FILE given (use - for standard output)"
                                               : "more than one FILE given");
    }
    o.output = argv[optind];
    return o;
}

[[noreturn]] void fail(const std::string& message) {
    std::fprintf(stderr, "audiorec: %s\n", message.c_str());
    std::exit(1);
}

bool write_all(int fd, const uint8_t* data, size_t bytes) {
    while (bytes > 0) {
        const ssize_t n = ::write(fd, data, bytes);
        if (n < 0 && errno == EINTR) {
            continue;
        }
        if (n <= 0) {
            return false;
        }
        data += n;
        bytes -= static_cast<size_t>(n);
    }
    return true;
}

} // namespace

int main(int argc, char** argv) {
    const Options options = parse_options(argc, argv);

    struct sigaction action {};
    action.sa_handler = on_signal;
    sigaction(SIGINT, &action, nullptr);
    sigaction(SIGTERM, &action, nullptr);
    std::signal(SIGPIPE, SIG_IGN);

    audiod_context* ctx = nullptr;
    if (const int rc = audiod_connect(options.app.c_str(), -1, &ctx); rc != 0) {
        fail(std::string("cannot reach the audiod server: ") + audiod_strerror(rc));
    }
    uint32_t server_rate = 0;
    uint32_t server_channels = 0;
    audiod_server_format(ctx, &server_rate, &server_channels);
    const auto format = *audiod::parse_format(options.format);
    const audiod::AudioFormat file_format{format, options.rate != 0 ? options.rate : server_rate,
                                          options.channels != 0 ? options.channels
                                                                : server_channels};

    audiod_stream_params params;
    audiod_stream_params_init(&params);
    params.format = static_cast<int>(file_format.format);
    params.rate = file_format.rate;
    params.channels = file_format.channels;
    params.latency_ms = options.latency_ms;
    params.sink = options.source.empty() ? nullptr : options.source.c_str();
    params.flags = AUDIOD_STREAM_RECORD;
    audiod_stream* stream = nullptr;
    if (const int rc = audiod_stream_create(ctx, &params, &stream); rc != 0) {
        const std::string detail = audiod_last_error(ctx);
        fail(std::string("cannot record: ") + (detail.empty() ? audiod_strerror(rc) : detail));
    }

    std::optional<audiod::AudioFileWriter> writer;
    if (options.output != "-") {
        auto created = audiod::AudioFileWriter::create(options.output, file_format,
                                                       audiod::container_for(options.output));
        if (const auto* error = std::get_if<std::string>(&created)) {
            fail(options.output + ": " + *error);
        }
        writer.emplace(std::move(std::get<audiod::AudioFileWriter>(created)));
    }
    if (!options.quiet) {
        std::fprintf(stderr, "audiorec: stream %u: %s %u Hz %u ch from %s\n",
                     audiod_stream_id(stream), std::string(audiod::format_name(format)).c_str(),
                     file_format.rate, file_format.channels,
                     options.source.empty() ? "the default sink's monitor"
                                            : options.source.c_str());
    }

    const size_t frame_bytes = audiod::sample_bytes(file_format.format) * file_format.channels;
    const uint64_t total = options.duration_s
                               ? static_cast<uint64_t>(*options.duration_s * file_format.rate + 0.5)
                               : ~uint64_t{0};
    if (options.realtime) {
        audiod::cli::make_realtime(kProgram, *options.realtime, options.quiet);
    }
    constexpr size_t kChunkFrames = 1024;
    std::vector<uint8_t> buffer(kChunkFrames * frame_bytes);
    uint64_t recorded = 0;
    int status = 0;
    while (recorded < total && !g_interrupted.load()) {
        const size_t want = static_cast<size_t>(std::min<uint64_t>(kChunkFrames, total - recorded));
        // A short wait, so that an interrupt is noticed promptly.
        const long n = audiod_stream_read(stream, buffer.data(), want, 200);
        if (n == AUDIOD_E_TIMEOUT || n == AUDIOD_E_AGAIN) {
            continue;
        }
        if (n < 0) {
            std::fprintf(stderr, "audiorec: %s\n", audiod_strerror(static_cast<int>(n)));
            status = 1;
            break;
        }
        const size_t bytes = static_cast<size_t>(n) * frame_bytes;
        const bool ok = writer ? writer->append(buffer.data(), bytes) == 0
                               : write_all(STDOUT_FILENO, buffer.data(), bytes);
        if (!ok) {
            std::fprintf(stderr, "audiorec: cannot write %s: %s\n", options.output.c_str(),
                         std::strerror(errno));
            status = 1;
            break;
        }
        recorded += static_cast<uint64_t>(n);
    }
    audiod_stream_timing timing{};
    audiod_stream_get_timing(stream, &timing);
    audiod_stream_close(stream);
    audiod_disconnect(ctx);
    if (writer && writer->finish() != 0) {
        std::fprintf(stderr, "audiorec: cannot finish %s: %s\n", options.output.c_str(),
                     std::strerror(errno));
        status = 1;
    }
    if (!options.quiet) {
        std::fprintf(stderr, "audiorec: %llu frames recorded, %llu overruns\n",
                     static_cast<unsigned long long>(recorded),
                     static_cast<unsigned long long>(timing.underruns));
    }
    return status;
}
