// audioplay: plays an audio file, raw audio or a test tone through audiod.
#include "audiod/audiod.h"
#include "cli.h"
#include "command_line.h"
#include "common/audio_file.h"
#include "common/volume_level.h"
#include "interrupt.h"
#include "realtime.h"
#include "stream_options.h"
#include "tone.h"

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <getopt.h>
#include <iterator>
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

struct Options {
    audiod::cli::StreamOptions stream{"audioplay", 100};
    std::string sink;
    float volume = 1.0f;
    bool raw = false;
    std::string raw_format;
    uint32_t raw_rate = 0;
    uint32_t raw_channels = 0;
    std::optional<double> tone_hz;
    double duration_s = 2.0;
    std::string input;
};

const audiod::cli::Tool& tool() {
    static const audiod::cli::Tool kTool{.name = "audioplay",
                                         .usage = kUsage.c_str(),
                                         .version = audiod_version(),
                                         .short_version = false,
                                         .options_first = false};
    return kTool;
}

[[noreturn]] void usage_error(const std::string& message) {
    audiod::cli::usage_error("audioplay", message);
}

Options parse_options(int argc, char** argv) {
    using audiod::cli::Option;
    enum { kRaw = 1000, kFormat, kRate, kChannels };
    static const Option kOwn[] = {
        {"sink", required_argument, 's'},   {"volume", required_argument, 'v'},
        {"raw", no_argument, kRaw},         {"format", required_argument, kFormat},
        {"rate", required_argument, kRate}, {"channels", required_argument, kChannels},
        {"tone", required_argument, 't'},   {"duration", required_argument, 'd'},
    };
    std::vector<Option> options(std::begin(kOwn), std::end(kOwn));
    options.insert(options.end(), std::begin(audiod::cli::kStreamOptions),
                   std::end(audiod::cli::kStreamOptions));
    Options o;
    const int first =
        audiod::cli::parse_command_line(argc, argv, tool(), options, [&](int c, const char* arg) {
            if (audiod::cli::take_stream_option(tool(), c, arg, o.stream)) {
                return;
            }
            switch (c) {
            case 's':
                o.sink = arg;
                break;
            case 'v': {
                const auto level = audiod::parse_volume_level(arg);
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
                o.raw_format = arg;
                break;
            case kRate:
                o.raw_rate = audiod::cli::parse_uint("audioplay", arg, "rate", 1, 768000);
                break;
            case kChannels:
                o.raw_channels = audiod::cli::parse_uint("audioplay", arg, "channel count", 1, 32);
                break;
            case 't':
                o.tone_hz =
                    audiod::cli::parse_double("audioplay", arg, "tone frequency", 1.0, 96000.0);
                break;
            case 'd':
                o.duration_s =
                    audiod::cli::parse_double("audioplay", arg, "duration", 0.0, 86400.0);
                break;
            }
        });
    if (o.tone_hz) {
        if (first < argc) {
            usage_error("--tone takes no FILE");
        }
        return o;
    }
    o.input = audiod::cli::only_operand(tool(), argc, argv, first,
                                        "no FILE given (use - for standard input)");
    if (o.raw && (o.raw_format.empty() || o.raw_rate == 0 || o.raw_channels == 0)) {
        usage_error("--raw needs --format, --rate and --channels");
    }
    if (!o.raw && (!o.raw_format.empty() || o.raw_rate != 0 || o.raw_channels != 0)) {
        usage_error("--format, --rate and --channels go with --raw");
    }
    return o;
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
                if (errno == EINTR && !audiod::cli::interrupted()) {
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

    audiod::cli::stop_on_interrupt();

    audiod_context* ctx = nullptr;
    if (const int rc = audiod_connect(options.stream.app.c_str(), -1, &ctx); rc != 0) {
        audiod::cli::fail("audioplay",
                          std::string("cannot connect to audiod: ") + audiod_strerror(rc));
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
                audiod::cli::fail("audioplay", options.input + ": " + std::strerror(errno));
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
                audiod::cli::fail("audioplay", options.input + ": " + *error);
            }
            source =
                std::make_unique<FileSource>(std::move(std::get<audiod::AudioFileReader>(reader)));
        }
    }

    // The server converts any format, rate and channel count itself.
    const audiod::AudioFormat in = source->format();
    audiod_stream_params params = audiod::cli::stream_params(
        static_cast<int>(in.format), in.rate, in.channels, options.stream, options.sink);
    params.volume = options.volume;

    audiod_stream* stream = nullptr;
    if (const int rc = audiod_stream_create(ctx, &params, &stream); rc != 0) {
        const std::string detail = audiod_last_error(ctx);
        audiod::cli::fail("audioplay", std::string("cannot create a stream: ") +
                                           (detail.empty() ? audiod_strerror(rc) : detail));
    }
    if (!options.stream.quiet) {
        std::fprintf(stderr, "audioplay: stream %u: %s %u Hz %u ch%s\n", audiod_stream_id(stream),
                     std::string(audiod::format_name(in.format)).c_str(), in.rate, in.channels,
                     options.sink.empty() ? "" : (" on " + options.sink).c_str());
    }

    if (options.stream.realtime) {
        audiod::cli::make_realtime("audioplay", *options.stream.realtime, options.stream.quiet);
    }
    constexpr size_t kChunkFrames = 4096;
    const size_t in_frame_bytes = audiod::sample_bytes(in.format) * in.channels;
    std::vector<uint8_t> buffer(kChunkFrames * in_frame_bytes);
    int status = 0;
    while (!audiod::cli::interrupted()) {
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
        while (done < static_cast<size_t>(frames) && !audiod::cli::interrupted()) {
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
    if (status == 0 && !audiod::cli::interrupted()) {
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
    return audiod::cli::interrupted() ? 130 : status;
}
