// audiorec: records from an audiod source into a WAV or FLAC file (or raw samples
// on standard output) until a duration has passed or it is interrupted.
#include "audiod/audiod.h"
#include "cli.h"
#include "command_line.h"
#include "common/audio_file.h"
#include "interrupt.h"
#include "protocol/sample_format.h"
#include "realtime.h"
#include "stream_options.h"

#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <getopt.h>
#include <iterator>
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
                         sources'); default: the server's default source
                         (default-source in audiod.conf(5), or as pactl
                         set-default-source chose), else the default
                         sink's monitor, i.e. what the default sink plays.
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

struct Options {
    audiod::cli::StreamOptions stream{"audiorec", 200};
    std::string source;
    std::string format = "s16le";
    uint32_t rate = 0;
    uint32_t channels = 0;
    std::optional<double> duration_s;
    std::string output;
};

Options parse_options(int argc, char** argv) {
    using audiod::cli::Option;
    enum { kFormat = 1000, kRate, kChannels };
    static const Option kOwn[] = {
        {"source", required_argument, 's'},   {"format", required_argument, kFormat},
        {"rate", required_argument, kRate},   {"channels", required_argument, kChannels},
        {"duration", required_argument, 'd'},
    };
    std::vector<Option> options(std::begin(kOwn), std::end(kOwn));
    options.insert(options.end(), std::begin(audiod::cli::kStreamOptions),
                   std::end(audiod::cli::kStreamOptions));
    const audiod::cli::Tool tool{.name = kProgram,
                                 .usage = kUsage.c_str(),
                                 .version = audiod_version(),
                                 .short_version = false,
                                 .options_first = false};
    Options o;
    const int first =
        audiod::cli::parse_command_line(argc, argv, tool, options, [&](int c, const char* arg) {
            if (audiod::cli::take_stream_option(tool, c, arg, o.stream)) {
                return;
            }
            switch (c) {
            case 's':
                o.source = arg;
                break;
            case kFormat:
                if (!audiod::parse_format(arg)) {
                    audiod::cli::usage_error(kProgram, std::string("unknown format '") + arg + "'");
                }
                o.format = arg;
                break;
            case kRate:
                o.rate = audiod::cli::parse_uint(kProgram, arg, "rate", AUDIOD_MIN_RATE,
                                                 AUDIOD_MAX_RATE);
                break;
            case kChannels:
                o.channels =
                    audiod::cli::parse_uint(kProgram, arg, "channel count", 1, AUDIOD_MAX_CHANNELS);
                break;
            case 'd':
                o.duration_s = audiod::cli::parse_double(kProgram, arg, "duration", 0.0, 1e7);
                break;
            }
        });
    o.output = audiod::cli::only_operand(tool, argc, argv, first,
                                         "no FILE given (use - for standard output)");
    return o;
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

    audiod::cli::stop_on_interrupt();
    std::signal(SIGPIPE, SIG_IGN);

    audiod_context* ctx = nullptr;
    if (const int rc = audiod_connect(options.stream.app.c_str(), -1, &ctx); rc != 0) {
        audiod::cli::fail(kProgram,
                          std::string("cannot reach the audiod server: ") + audiod_strerror(rc));
    }
    uint32_t server_rate = 0;
    uint32_t server_channels = 0;
    audiod_server_format(ctx, &server_rate, &server_channels);
    const auto format = *audiod::parse_format(options.format);
    const audiod::AudioFormat file_format{format, options.rate != 0 ? options.rate : server_rate,
                                          options.channels != 0 ? options.channels
                                                                : server_channels};

    audiod_stream_params params =
        audiod::cli::stream_params(static_cast<int>(file_format.format), file_format.rate,
                                   file_format.channels, options.stream, options.source);
    params.flags = AUDIOD_STREAM_RECORD;
    audiod_stream* stream = nullptr;
    if (const int rc = audiod_stream_create(ctx, &params, &stream); rc != 0) {
        const std::string detail = audiod_last_error(ctx);
        audiod::cli::fail(kProgram, std::string("cannot record: ") +
                                        (detail.empty() ? audiod_strerror(rc) : detail));
    }

    std::optional<audiod::AudioFileWriter> writer;
    if (options.output != "-") {
        auto created = audiod::AudioFileWriter::create(options.output, file_format,
                                                       audiod::container_for(options.output));
        if (const auto* error = std::get_if<std::string>(&created)) {
            audiod::cli::fail(kProgram, options.output + ": " + *error);
        }
        writer.emplace(std::move(std::get<audiod::AudioFileWriter>(created)));
    }
    if (!options.stream.quiet) {
        std::fprintf(stderr, "audiorec: stream %u: %s %u Hz %u ch from %s\n",
                     audiod_stream_id(stream), std::string(audiod::format_name(format)).c_str(),
                     file_format.rate, file_format.channels,
                     options.source.empty() ? "the default source" : options.source.c_str());
    }

    const size_t frame_bytes = audiod::sample_bytes(file_format.format) * file_format.channels;
    const uint64_t total = options.duration_s
                               ? static_cast<uint64_t>(*options.duration_s * file_format.rate + 0.5)
                               : ~uint64_t{0};
    if (options.stream.realtime) {
        audiod::cli::make_realtime(kProgram, *options.stream.realtime, options.stream.quiet);
    }
    constexpr size_t kChunkFrames = 1024;
    std::vector<uint8_t> buffer(kChunkFrames * frame_bytes);
    uint64_t recorded = 0;
    int status = 0;
    while (recorded < total && !audiod::cli::interrupted()) {
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
    if (!options.stream.quiet) {
        std::fprintf(stderr, "audiorec: %llu frames recorded, %llu overruns\n",
                     static_cast<unsigned long long>(recorded),
                     static_cast<unsigned long long>(timing.underruns));
    }
    return status;
}
