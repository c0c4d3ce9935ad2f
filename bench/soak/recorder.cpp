#include "recorder.h"

#include "processes.h"

#include "audiod/audiod.h"

#include <csignal>
#include <cstring>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <unistd.h>

namespace audiod::soak {

Recorder::Recorder(std::string sink, test::LatestNumbers& latest,
                   std::chrono::steady_clock::time_point start, std::vector<std::string> command)
    : sink_(std::move(sink))
    , ledger_(sink_, latest)
    , start_(start)
    , command_(std::move(command))
    , thread_([this] {
        // SIGINT and SIGTERM are the main thread's: they end the soak.
        sigset_t ending;
        sigemptyset(&ending);
        sigaddset(&ending, SIGINT);
        sigaddset(&ending, SIGTERM);
        pthread_sigmask(SIG_BLOCK, &ending, nullptr);
        command_.empty() ? run() : run_command();
    }) {}

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

void Recorder::run_command() {
    int fds[2];
    if (pipe2(fds, O_CLOEXEC) != 0) {
        std::lock_guard lock(mutex_);
        failure_ = "pipe";
        return;
    }
    const pid_t pid = spawn_with_stdio(command_, -1, fds[1]);
    ::close(fds[1]);
    if (pid < 0) {
        ::close(fds[0]);
        std::lock_guard lock(mutex_);
        failure_ = "could not start " + command_[0];
        return;
    }
    recording_ = true;
    std::vector<int16_t> buffer(2 * 4096);
    size_t have = 0; // bytes in buffer
    while (!stopping_) {
        pollfd p{fds[0], POLLIN, 0};
        if (::poll(&p, 1, 200) <= 0) {
            continue;
        }
        char* bytes = reinterpret_cast<char*>(buffer.data());
        const ssize_t n = ::read(fds[0], bytes + have, buffer.size() * 2 - have);
        if (n <= 0) {
            std::lock_guard lock(mutex_);
            failure_ = command_[0] + " ended";
            break;
        }
        have += static_cast<size_t>(n);
        const size_t frames = have / 4;
        ledger_.feed(buffer.data(), frames, now_s());
        std::memmove(bytes, bytes + frames * 4, have - frames * 4);
        have -= frames * 4;
    }
    end_process(pid, 5000);
    ::close(fds[0]);
}

} // namespace audiod::soak
