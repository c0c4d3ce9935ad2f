// audioplay: plays an audio file, raw audio or a test tone through audiod.
#include "audiod/audiod.h"
#include "cli.h"
#include "common/audio_file.h"
#include "common/volume_level.h"
#include "realtime.h"
#include "tone.h"

#include <atomic>
#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <getopt.h>
#include <memory>
#include <optional>
#include <string>
#include <unistd.h>
#include <vector>

namespace {

const std::string kUsage = R"(Usage: audioplay [OPTION]... FILE|-
       audioplay --raw --format F --rate R --channels C [OPTION]... FILE|-
       audioplay --tone HZ [--duration SECONDS] [OPTION]...
Play audio through the audiod sound server and exit once it has been heard.

FILE is an audio file in any format libsndfile reads: WAV, FLAC, Ogg Vorbis,
Ogg Opus, MP3, AIFF and more; '-' reads standard input (WAV and the other
uncompressed formats; raw samples with --raw). The server converts its rate,
channels and sample format. audioplay exits 0 when the last frame has been
played out.

Options:
  -s, --sink NAME        play on sink NAME instead of the default sink.
  -a, --app NAME         application name for per-application settings
                         (default: audioplay).
  -l, --latency-ms N     buffer N milliseconds ahead (default 100). Larger
                         survives more scheduling noise; smaller reacts faster.
  -v, --volume LEVEL     stream volume: 50%, 0.5, -6dB (default 100%).
      --raw              FILE holds headerless samples; give all of:
      --format F           u8, s16le, s24le, s24_3le, s32le or f32le
      --rate R             frames per second
      --channels C         channels per frame
  -t, --tone HZ          play a sine wave of HZ hertz at -12 dBFS, in the
                         server's own rate and channel count.
  -d, --duration SECONDS length of the tone (default 2).
)" + std::string(audiod::cli::kRealtimeHelp) +
                           R"(  -q, --quiet            print nothing but errors.
  -h, --help             show this help and exit.
      --version          show the version and exit.

The server's socket is $AUDIOD_SOCKET, else $XDG_RUNTIME_DIR/audiod/socket,
else /tmp/audiod-$UID/socket.

Exit status: 0 when everything was played, 1 on an error (no server, a bad
file, a refused format), 2 on a usage error, 130 when interrupted.
)";

std::atomic<bool> g_interrupted{false};

void on_signal(int) {
    g_interrupted.store(true);
}

struct Options {
    std::string sink;
    std::string app = "audioplay";
    uint32_t latency_ms = 100;
    float volume = 1.0f;
    bool raw = false;
    std::string raw_format;
    uint32_t raw_rate = 0;
    uint32_t raw_channels = 0;
    std::optional<double> tone_hz;
    double duration_s = 2.0;
    bool quiet = false;
    std::optional<int> realtime; // --realtime: the priority, 0 = the default
    std::string input;
};

[[noreturn]] void usage_error(const std::string& message) {
    audiod::cli::usage_error("audioplay", message);
}

uint32_t parse_uint(const char* text, const char* what, uint32_t min, uint32_t max) {
    return audiod::cli::parse_uint("audioplay", text, what, min, max);
}

double parse_double(const char* text, const char* what, double min, double max) {
    return audiod::cli::parse_double("audioplay", text, what, min, max);
}

Options parse_options(int argc, char** argv) {
    enum { kRaw = 1000, kFormat, kRate, kChannels, kVersion };
    const option long_options[] = {
        {"sink", required_argument, nullptr, 's'},
        {"app", required_argument, nullptr, 'a'},
        {"latency-ms", required_argument, nullptr, 'l'},
        {"volume", required_argument, nullptr, 'v'},
        {"raw", no_argument, nullptr, kRaw},
        {"format", required_argument, nullptr, kFormat},
        {"rate", required_argument, nullptr, kRate},
        {"channels", required_argument, nullptr, kChannels},
        {"tone", required_argument, nullptr, 't'},
        {"duration", required_argument, nullptr, 'd'},
        {"realtime", optional_argument, nullptr, 'r'},
        {"quiet", no_argument, nullptr, 'q'},
        {"help", no_argument, nullptr, 'h'},
        {"version", no_argument, nullptr, kVersion},
        {nullptr, 0, nullptr, 0},
    };
    Options o;
    for (;;) {
        const int c = getopt_long(argc, argv, "s:a:l:v:t:d:r::qh", long_options, nullptr);
        if (c == -1) {
            break;
        }
        switch (c) {
        case 's':
            o.sink = optarg;
            break;
        case 'a':
            o.app = optarg;
            break;
        case 'l':
            o.latency_ms = parse_uint(optarg, "latency", 1, AUDIOD_MAX_LATENCY_MS);
            break;
        case 'v': {
            const auto level = audiod::parse_volume_level(optarg);
            if (const auto* error = std::get_if<std::string>(&level)) {
                usage_error(*error);
            }
            const auto& parsed = std::get<audiod::VolumeLevel>(level);
            if (parsed.mode != audiod::LevelMode::absolute) {
                usage_error("--volume takes an absolute level such as 50%, 0.5 or -6dB");
            }
            o.volume = static_cast<float>(parsed.value);
            break;
        }
        case kRaw:
            o.raw = true;
            break;
        case kFormat:
            o.raw_format = optarg;
            break;
        case kRate:
            o.raw_rate = parse_uint(optarg, "rate", 1, 768000);
            break;
        case kChannels:
            o.raw_channels = parse_uint(optarg, "channel count", 1, 32);
            break;
        case 't':
            o.tone_hz = parse_double(optarg, "tone frequency", 1.0, 96000.0);
            break;
        case 'd':
            o.duration_s = parse_double(optarg, "duration", 0.0, 86400.0);
            break;
        case 'r':
            o.realtime = audiod::cli::parse_realtime_priority("audioplay", optarg);
            break;
        case 'q':
            o.quiet = true;
            break;
        case 'h':
            std::fputs(kUsage.c_str(), stdout);
            std::exit(0);
        case kVersion:
            std::printf("audioplay %s\n", audiod_version());
            std::exit(0);
        default:
            std::fputs("Try 'audioplay --help' for more information.\n", stderr);
            std::exit(2);
        }
    }
    if (o.tone_hz) {
        if (optind < argc) {
            usage_error("--tone takes no FILE");
        }
        return o;
    }
    if (optind + 1 != argc) {
        usage_error(optind >= argc ? "no FILE given (use - for standard input)"
                                   : "more than one FILE given");
    }
    o.input = argv[optind];
    if (o.raw && (o.raw_format.empty() || o.raw_rate == 0 || o.raw_channels == 0)) {
        usage_error("--raw needs --format, --rate and --channels");
    }
    if (!o.raw && (!o.raw_format.empty() || o.raw_rate != 0 || o.raw_channels != 0)) {
        usage_error("--format, --rate and --channels go with --raw");
    }
    return o;
}

[[noreturn]] void fail(const std::string& message) {
    std::fprintf(stderr, "audioplay: %s\n", message.c_str());
    std::exit(1);
}

// Where frames come from: a WAV reader, a raw fd, or the tone generator.
class Source {
public:
    virtual ~Source() = default;
    virtual audiod::AudioFormat format() const = 0;
    // Reads up to `frames` frames into `out`; 0 at the end, negative on error.
    virtual long read(void* out, size_t frames) = 0;
};

class FileSource : public Source {
public:
    explicit FileSource(audiod::AudioFileReader&& reader)
        : reader_(std::move(reader)) {}
    audiod::AudioFormat format() const override { return reader_.format(); }
    long read(void* out, size_t frames) override { return reader_.read_frames(out, frames); }

private:
    audiod::AudioFileReader reader_;
};

class RawSource : public Source {
public:
    RawSource(int fd, audiod::AudioFormat format)
        : fd_(fd)
        , format_(format) {
        frame_bytes_ = audiod::sample_bytes(format.format) * format.channels;
    }
    audiod::AudioFormat format() const override { return format_; }
    long read(void* out, size_t frames) override {
        // Fill whole frames; a short read from a pipe leaves a partial frame
        // that must wait for the rest.
        auto* dst = static_cast<uint8_t*>(out);
        const size_t want = frames * frame_bytes_;
        size_t got = 0;
        while (got < want) {
            const ssize_t n = ::read(fd_, dst + got, want - got);
            if (n == 0) {
                break;
            }
            if (n < 0) {
                if (errno == EINTR && !g_interrupted.load()) {
                    continue;
                }
                return got >= frame_bytes_ ? static_cast<long>(got / frame_bytes_) : -errno;
            }
            got += static_cast<size_t>(n);
            if (got % frame_bytes_ == 0) {
                break;
            }
        }
        return static_cast<long>(got / frame_bytes_);
    }

private:
    int fd_;
    audiod::AudioFormat format_;
    size_t frame_bytes_;
};

class ToneSource : public Source {
public:
    ToneSource(double hz, double seconds, uint32_t rate, uint32_t channels)
        : tone_(hz, 0.25, rate, channels)
        , rate_(rate)
        , channels_(channels)
        , left_(static_cast<uint64_t>(seconds * rate)) {}
    audiod::AudioFormat format() const override {
        return {audiod::SampleFormat::s16le, rate_, channels_};
    }
    long read(void* out, size_t frames) override {
        const size_t n = std::min<uint64_t>(frames, left_);
        tone_.fill_s16(static_cast<int16_t*>(out), n);
        left_ -= n;
        return static_cast<long>(n);
    }

private:
    audiod::ToneGenerator tone_;
    uint32_t rate_;
    uint32_t channels_;
    uint64_t left_;
};

} // namespace

int main(int argc, char** argv) {
    const Options options = parse_options(argc, argv);

    struct sigaction action {};
    action.sa_handler = on_signal;
    sigaction(SIGINT, &action, nullptr);
    sigaction(SIGTERM, &action, nullptr);

    audiod_context* ctx = nullptr;
    if (const int rc = audiod_connect(options.app.c_str(), -1, &ctx); rc != 0) {
        fail(std::string("cannot connect to audiod: ") + audiod_strerror(rc));
    }

    std::unique_ptr<Source> source;
    int input_fd = -1;
    if (options.tone_hz) {
        uint32_t rate = 0;
        uint32_t channels = 0;
        audiod_server_format(ctx, &rate, &channels);
        source = std::make_unique<ToneSource>(*options.tone_hz, options.duration_s, rate, channels);
    } else {
        if (options.raw) {
            input_fd = options.input == "-" ? STDIN_FILENO
                                            : ::open(options.input.c_str(), O_RDONLY | O_CLOEXEC);
            if (input_fd < 0) {
                fail(options.input + ": " + std::strerror(errno));
            }
            const auto format = audiod::parse_format(options.raw_format);
            if (!format) {
                usage_error("unknown format '" + options.raw_format + "'");
            }
            source = std::make_unique<RawSource>(
                input_fd, audiod::AudioFormat{*format, options.raw_rate, options.raw_channels});
        } else {
            auto reader = audiod::AudioFileReader::open(options.input);
            if (const auto* error = std::get_if<std::string>(&reader)) {
                fail(options.input + ": " + *error);
            }
            source =
                std::make_unique<FileSource>(std::move(std::get<audiod::AudioFileReader>(reader)));
        }
    }

    // The server converts any format, rate and channel count itself.
    const audiod::AudioFormat in = source->format();
    audiod_stream_params params;
    audiod_stream_params_init(&params);
    params.format = static_cast<int>(in.format);
    params.rate = in.rate;
    params.channels = in.channels;
    params.latency_ms = options.latency_ms;
    params.sink = options.sink.empty() ? nullptr : options.sink.c_str();
    params.volume = options.volume;

    audiod_stream* stream = nullptr;
    if (const int rc = audiod_stream_create(ctx, &params, &stream); rc != 0) {
        const std::string detail = audiod_last_error(ctx);
        fail(std::string("cannot create a stream: ") +
             (detail.empty() ? audiod_strerror(rc) : detail));
    }
    if (!options.quiet) {
        std::fprintf(stderr, "audioplay: stream %u: %s %u Hz %u ch%s\n", audiod_stream_id(stream),
                     std::string(audiod::format_name(in.format)).c_str(), in.rate, in.channels,
                     options.sink.empty() ? "" : (" on " + options.sink).c_str());
    }

    if (options.realtime) {
        audiod::cli::make_realtime("audioplay", *options.realtime, options.quiet);
    }
    constexpr size_t kChunkFrames = 4096;
    const size_t in_frame_bytes = audiod::sample_bytes(in.format) * in.channels;
    std::vector<uint8_t> buffer(kChunkFrames * in_frame_bytes);
    int status = 0;
    while (!g_interrupted.load()) {
        const long frames = source->read(buffer.data(), kChunkFrames);
        if (frames < 0) {
            std::fprintf(stderr, "audioplay: read error: %s\n",
                         std::strerror(static_cast<int>(-frames)));
            status = 1;
            break;
        }
        if (frames == 0) {
            break;
        }
        size_t done = 0;
        while (done < static_cast<size_t>(frames) && !g_interrupted.load()) {
            const long n = audiod_stream_write(stream, buffer.data() + done * in_frame_bytes,
                                               static_cast<size_t>(frames) - done, -1);
            if (n < 0) {
                std::fprintf(stderr, "audioplay: %s\n", audiod_strerror(static_cast<int>(n)));
                status = 1;
                break;
            }
            done += static_cast<size_t>(n);
        }
        if (status != 0) {
            break;
        }
    }
    if (status == 0 && !g_interrupted.load()) {
        if (const int rc = audiod_stream_drain(stream, -1); rc != 0) {
            std::fprintf(stderr, "audioplay: drain: %s\n", audiod_strerror(rc));
            status = 1;
        }
    }
    audiod_stream_close(stream);
    audiod_disconnect(ctx);
    if (input_fd > STDERR_FILENO) {
        ::close(input_fd);
    }
    return g_interrupted.load() ? 130 : status;
}
