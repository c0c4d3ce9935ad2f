// End-to-end latency of an RTP link over loopback, tone onset in to onset
// out: against a running server whose sink `net` sends RTP to its own
// source `rx`, records net.monitor (what is sent) and rx (what arrives)
// while a burst plays into net, and compares where the burst starts in
// each. Both devices keep time from the server's start, so a record
// stream's first frame, placed on its device's timeline (sink_start_frame),
// puts both recordings on one clock; the two devices start within a
// fraction of a millisecond of each other, which bounds the error.
//   audiod-bench-rtp-latency [--runs N] [--sink NAME] [--source NAME]
// prints the median and range, ms. Any sink and source will do: the
// PortAudio figures measure a sink and a source joined in a JACK graph.
#include "audiod/audiod.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <string>
#include <thread>
#include <vector>

namespace {

constexpr uint32_t kRate = 48000;

struct Recorder {
    audiod_stream* stream = nullptr;
    std::vector<float> samples; // stereo
};

// A stereo float stream at kRate on `endpoint` (a sink, or with
// AUDIOD_STREAM_RECORD a source).
audiod_stream* open_stream(audiod_context* ctx, const char* endpoint, uint32_t latency_ms,
                           uint32_t flags) {
    audiod_stream_params p;
    audiod_stream_params_init(&p);
    p.format = AUDIOD_FORMAT_F32LE;
    p.rate = kRate;
    p.channels = 2;
    p.latency_ms = latency_ms;
    p.sink = endpoint;
    p.flags = flags;
    audiod_stream* stream = nullptr;
    return audiod_stream_create(ctx, &p, &stream) == 0 ? stream : nullptr;
}

bool open_record(audiod_context* ctx, const char* source, Recorder& r) {
    r.stream = open_stream(ctx, source, 1000, AUDIOD_STREAM_RECORD);
    return r.stream != nullptr;
}

void drain(Recorder& r) {
    float chunk[2048 * 2];
    for (;;) {
        const long n = audiod_stream_read(r.stream, chunk, 2048, 0);
        if (n <= 0) {
            return;
        }
        r.samples.insert(r.samples.end(), chunk, chunk + n * 2);
    }
}

std::optional<double> onset_frame(const Recorder& r) {
    audiod_stream_timing t{};
    if (audiod_stream_get_timing(r.stream, &t) != 0 || t.sink_start_frame == UINT64_MAX) {
        return std::nullopt;
    }
    for (size_t i = 0; i < r.samples.size(); i += 2) {
        if (std::fabs(r.samples[i]) > 0.05f) {
            return static_cast<double>(t.sink_start_frame) + static_cast<double>(i / 2);
        }
    }
    return std::nullopt;
}

std::optional<double> measure(audiod_context* ctx, const std::string& sink,
                              const std::string& source) {
    Recorder sent;
    Recorder arrived;
    const std::string monitor = sink + ".monitor";
    if (!open_record(ctx, monitor.c_str(), sent) || !open_record(ctx, source.c_str(), arrived)) {
        std::fprintf(stderr, "cannot record %s and %s: %s\n", monitor.c_str(), source.c_str(),
                     audiod_last_error(ctx));
        return std::nullopt;
    }
    audiod_stream* player = open_stream(ctx, sink.c_str(), 50, 0);
    if (player == nullptr) {
        std::fprintf(stderr, "cannot play into %s: %s\n", sink.c_str(), audiod_last_error(ctx));
        return std::nullopt;
    }
    // 300 ms of silence, a 200 ms burst, 700 ms of silence.
    std::vector<float> signal(size_t{kRate} * 12 / 10 * 2, 0.0f);
    for (size_t i = kRate * 3 / 10; i < kRate / 2; ++i) {
        const auto v = static_cast<float>(0.5 * std::sin(2 * M_PI * 1000.0 * i / kRate));
        signal[2 * i] = signal[2 * i + 1] = v;
    }
    size_t written = 0;
    const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(3);
    while (std::chrono::steady_clock::now() < until) {
        if (written < signal.size() / 2) {
            const long n =
                audiod_stream_write(player, signal.data() + written * 2,
                                    std::min<size_t>(480, signal.size() / 2 - written), 0);
            written += n > 0 ? static_cast<size_t>(n) : 0;
        }
        drain(sent);
        drain(arrived);
        std::this_thread::sleep_for(std::chrono::milliseconds(2));
    }
    const auto in = onset_frame(sent);
    const auto out = onset_frame(arrived);
    if (std::getenv("RTP_LATENCY_DEBUG") != nullptr && in && out) {
        std::fprintf(stderr, "sent: onset at device frame %.0f; arrived: %.0f\n", *in, *out);
    }
    audiod_stream_close(player);
    audiod_stream_close(sent.stream);
    audiod_stream_close(arrived.stream);
    if (!in || !out) {
        std::fprintf(stderr, "the burst was not heard on both sides\n");
        return std::nullopt;
    }
    return (*out - *in) * 1000.0 / kRate;
}

} // namespace

int main(int argc, char** argv) {
    int runs = 7;
    std::string sink = "net";
    std::string source = "rx";
    for (int i = 1; i < argc; ++i) {
        if (std::strcmp(argv[i], "--runs") == 0 && i + 1 < argc) {
            runs = std::max(1, std::atoi(argv[++i]));
        } else if (std::strcmp(argv[i], "--sink") == 0 && i + 1 < argc) {
            sink = argv[++i];
        } else if (std::strcmp(argv[i], "--source") == 0 && i + 1 < argc) {
            source = argv[++i];
        } else {
            std::fprintf(
                stderr,
                "usage: audiod-bench-rtp-latency [--runs N] [--sink NAME] [--source NAME]\n");
            return 2;
        }
    }
    audiod_context* ctx = nullptr;
    if (audiod_connect("rtp-latency", 3000, &ctx) != 0) {
        std::fprintf(stderr, "no server\n");
        return 1;
    }
    std::vector<double> results;
    for (int i = 0; i < runs; ++i) {
        if (const auto ms = measure(ctx, sink, source)) {
            results.push_back(*ms);
        }
    }
    audiod_disconnect(ctx);
    if (results.empty()) {
        return 1;
    }
    std::sort(results.begin(), results.end());
    std::printf("%.1f,%.1f,%.1f\n", results[results.size() / 2], results.front(), results.back());
    return 0;
}
