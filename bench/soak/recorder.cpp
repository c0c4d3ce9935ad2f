#include "recorder.h"

#include "audiod/audiod.h"

namespace audiod::soak {

Recorder::Recorder(std::string sink, test::LatestNumbers& latest,
                   std::chrono::steady_clock::time_point start)
    : sink_(std::move(sink))
    , ledger_(sink_, latest)
    , start_(start)
    , thread_([this] { run(); }) {}

Recorder::~Recorder() {
    stop();
}

void Recorder::stop() {
    stopping_ = true;
    if (thread_.joinable()) {
        thread_.join();
        ledger_.finish();
    }
}

double Recorder::now_s() const {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
}

std::vector<double> Recorder::overruns() const {
    std::lock_guard lock(mutex_);
    return overruns_;
}

std::string Recorder::failure() const {
    std::lock_guard lock(mutex_);
    return failure_;
}

void Recorder::run() {
    audiod_context* ctx = nullptr;
    const std::string app = "soak-recorder-" + sink_;
    if (const int rc = audiod_connect(app.c_str(), 10000, &ctx); rc != 0) {
        std::lock_guard lock(mutex_);
        failure_ = "connect: " + std::string(audiod_strerror(rc));
        return;
    }
    audiod_stream_params params;
    audiod_stream_params_init(&params);
    const std::string source = sink_ + ".monitor";
    params.sink = source.c_str();
    params.flags = AUDIOD_STREAM_RECORD;
    params.latency_ms = 2000; // a second or two of this thread's lateness
    audiod_stream* stream = nullptr;
    if (const int rc = audiod_stream_create(ctx, &params, &stream); rc != 0) {
        std::lock_guard lock(mutex_);
        failure_ = "record " + source + ": " + audiod_last_error(ctx);
        audiod_disconnect(ctx);
        return;
    }
    recording_ = true;
    std::vector<int16_t> buffer(2 * 4096);
    uint64_t overruns = 0;
    while (!stopping_) {
        const long n = audiod_stream_read(stream, buffer.data(), 4096, 200);
        if (n > 0) {
            ledger_.feed(buffer.data(), static_cast<size_t>(n), now_s());
        }
        audiod_stream_timing timing{};
        if (audiod_stream_get_timing(stream, &timing) == 0 && timing.underruns > overruns) {
            overruns = timing.underruns;
            std::lock_guard lock(mutex_);
            overruns_.push_back(now_s());
        }
    }
    audiod_stream_close(stream);
    audiod_disconnect(ctx);
}

} // namespace audiod::soak
