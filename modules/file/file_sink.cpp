// The file sink: writes the sink's mix to a WAV or FLAC file, paced by a
// timer like a sound card.
//
//   [sinks.recorder]
//   type = "file"
//   path = "/tmp/mix.flac"  # kOptions below lists every option
//
// `clock-rate` makes the sink stand in for a sound card whose crystal is
// off: it takes frames at that pace while the file says the sink's rate
// (within 1 %), as a real card's clock never quite matches the system's.
// The RT thread only copies each quantum into a lock-free queue; a writer
// thread of the module's own moves it to disk (common/audio_file.h) and, for
// a WAV, rewrites the header after every flush, so the file is valid after a
// clean stop and readable up to the last flush (at most kFlushInterval old)
// after a crash.
#include "audiod/audiod.h"
#include "audiod/module.h"
#include "common/audio_file.h"
#include "common/spsc_queue.h"
#include "device_options.h"
#include "module_ops.h"
#include "timer_clock.h"

#include <atomic>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstring>
#include <memory>
#include <string>
#include <thread>
#include <vector>

namespace {

using audiod::refuse;
using audiod::SampleFormat;
using audiod::TimerClock;

constexpr auto kFlushInterval = std::chrono::milliseconds(20);
// The queue absorbs disk stalls of up to this long before frames are dropped.
constexpr uint32_t kQueueSeconds = 4;

constexpr audiod_option_spec kOptions[] = {
    {"path", "string", nullptr, "", "the file to write (required)"},
    {"format", "enum", "s16le", "s16le|s32le|f32le", "the file's sample format"},
    {"container", "enum", nullptr, "wav|flac",
     "the file's kind; default: flac if the path ends in .flac, else wav"},
    {"clock-rate", "integer", nullptr, "",
     "frames a second the sink's timer takes, within 1 % of the sink's rate (a card whose "
     "clock is off); default: the sink's rate"},
};

std::optional<SampleFormat> parse_output_format(const std::string& text) {
    const auto format = audiod::parse_format(text);
    if (format == SampleFormat::s16le || format == SampleFormat::s32le ||
        format == SampleFormat::f32le) {
        return format;
    }
    return std::nullopt;
}

class FileSink : public audiod::TimerPaced {
public:
    FileSink(const audiod_host* host, const audiod_device_config& config,
             audiod::AudioFileWriter&& writer, uint32_t frame_bytes, uint32_t clock_rate)
        : TimerPaced(clock_rate, config.quantum, TimerClock::AfterXrun::restart)
        , writer_(std::move(writer))
        , queue_(size_t{config.rate} * kQueueSeconds * frame_bytes)
        , frame_bytes_(frame_bytes)
        , name_(config.name)
        , host_(host) {}
    // Stops the writer thread once it has written everything, and closes
    // the file. Thread: control.
    ~FileSink();
    FileSink(const FileSink&) = delete;
    FileSink& operator=(const FileSink&) = delete;

    // Thread: control.
    static std::unique_ptr<FileSink> open(const audiod::OpenRequest& request,
                                          audiod_open_info* info, std::string* error, int* code);

    // Thread: rt.
    int write_rt(const void* frames, uint32_t count) noexcept;
    void stop_rt() noexcept {}

    // Thread: any.
    [[nodiscard]] uint64_t xruns() const noexcept {
        return TimerPaced::xruns() + overflows_.load(std::memory_order_relaxed);
    }

private:
    void log(int level, const std::string& message) const {
        if (host_ != nullptr && host_->log != nullptr) {
            host_->log(level, "file-sink", (name_ + ": " + message).c_str());
        }
    }
    // Thread: the writer thread.
    void run_writer();

    audiod::AudioFileWriter writer_;
    audiod::SpscQueue<uint8_t> queue_;
    uint32_t frame_bytes_;
    std::string name_;
    const audiod_host* host_;
    std::thread thread_;
    std::atomic<bool> stopping_{false};
    std::atomic<uint64_t> dropped_frames_{0};
    std::atomic<uint64_t> overflows_{0};
};

std::unique_ptr<FileSink> FileSink::open(const audiod::OpenRequest& request, audiod_open_info* info,
                                         std::string* error, int* code) {
    const audiod_device_config& config = request.config;
    const audiod::DeviceOptions options(config);
    if (auto refusal = options.check_keys(kOptions, "the file sink")) {
        return refuse(error, code, std::move(*refusal), -EINVAL);
    }
    uint64_t clock_rate = config.rate;
    if (const auto v = options.get("clock-rate")) {
        if (!audiod::parse_uint(*v, AUDIOD_MAX_RATE, clock_rate) ||
            std::abs(static_cast<double>(clock_rate) / config.rate - 1) > 0.01) {
            return refuse(error, code,
                          "clock-rate '" + *v + "' is not within 1 % of the sink's rate " +
                              std::to_string(config.rate),
                          -EINVAL);
        }
    }
    const auto path = options.get("path");
    if (!path || path->empty()) {
        return refuse(error, code, "the file sink needs path = \"FILE.wav\"", -EINVAL);
    }
    const auto container_name = options.get("container");
    const auto container =
        container_name ? audiod::parse_container(*container_name) : audiod::container_for(*path);
    if (!container) {
        return refuse(error, code, "container '" + *container_name + "' is not one of wav, flac",
                      -EINVAL);
    }
    const auto format = parse_output_format(options.get("format").value_or("s16le"));
    if (!format) {
        return refuse(error, code,
                      "format '" + options.get("format").value_or("") +
                          "' is not one of s16le, s32le, f32le",
                      -EINVAL);
    }
    auto created = audiod::AudioFileWriter::create(
        *path, audiod::AudioFormat{*format, config.rate, config.channels}, *container);
    if (auto* message = std::get_if<std::string>(&created)) {
        return refuse(error, code, *path + ": " + *message, -EIO);
    }
    auto sink = std::make_unique<FileSink>(
        request.host, config, std::move(std::get<audiod::AudioFileWriter>(created)),
        audiod::sample_bytes(*format) * config.channels, static_cast<uint32_t>(clock_rate));
    try {
        sink->thread_ = std::thread([s = sink.get()] { s->run_writer(); });
    } catch (const std::system_error&) {
        return refuse(error, code, "cannot start the writer thread", -EAGAIN);
    }
    info->format = static_cast<int>(*format);
    info->latency_frames = 0;
    return sink;
}

FileSink::~FileSink() {
    stopping_.store(true, std::memory_order_release);
    if (thread_.joinable()) {
        thread_.join();
    }
    if (const int rc = writer_.finish(); rc != 0) {
        log(AUDIOD_LOG_ERROR, std::string("closing the file: ") + std::strerror(-rc));
    }
    if (const uint64_t dropped = dropped_frames_.load()) {
        log(AUDIOD_LOG_WARNING,
            "the disk fell behind; dropped " + std::to_string(dropped) + " frames");
    }
}

int FileSink::write_rt(const void* frames, uint32_t count) noexcept {
    const size_t bytes = size_t{count} * frame_bytes_;
    // Whole frames or nothing, so the file never tears a frame in half.
    if (queue_.capacity() - queue_.size_approx() < bytes) {
        dropped_frames_.fetch_add(count, std::memory_order_relaxed);
        overflows_.fetch_add(1, std::memory_order_relaxed);
        return 0;
    }
    queue_.try_push_n(static_cast<const uint8_t*>(frames), bytes);
    return 0;
}

void FileSink::run_writer() {
    // Whole frames only: the writer takes nothing else.
    std::vector<uint8_t> chunk(size_t{frame_bytes_} * (64 * 1024 / frame_bytes_ + 1));
    bool failed = false;
    for (;;) {
        const bool last = stopping_.load(std::memory_order_acquire);
        size_t moved = 0;
        while (const size_t n = queue_.try_pop_n(chunk.data(), chunk.size())) {
            moved += n;
            if (!failed) {
                if (const int rc = writer_.append(chunk.data(), n); rc != 0) {
                    failed = true;
                    log(AUDIOD_LOG_ERROR, std::string("writing stopped: ") + std::strerror(-rc));
                }
            }
        }
        if (moved > 0 && !failed) {
            if (const int rc = writer_.flush_header(); rc != 0) {
                failed = true;
                log(AUDIOD_LOG_ERROR, std::string("header update failed: ") + std::strerror(-rc));
            }
        }
        if (last) {
            return;
        }
        std::this_thread::sleep_for(kFlushInterval);
    }
}

constexpr audiod_module kModule = audiod::make_module<FileSink, kOptions>(
    "file", "writes the mix to a WAV or FLAC file, paced by a timer");

} // namespace

extern "C" __attribute__((visibility("default"))) const audiod_module* audiod_module_entry(void) {
    return &kModule;
}
