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
#include "timer_clock.h"

#include <atomic>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstring>
#include <iterator>
#include <memory>
#include <new>
#include <string>
#include <thread>
#include <vector>

namespace {

using audiod::SampleFormat;
using audiod::TimerClock;

constexpr auto kFlushInterval = std::chrono::milliseconds(20);
// The queue absorbs disk stalls of up to this long before frames are dropped.
constexpr uint32_t kQueueSeconds = 4;

struct FileSink {
    FileSink(const audiod_device_config& config, audiod::AudioFileWriter&& w, uint32_t frame_bytes,
             uint32_t clock_rate)
        : clock(clock_rate, config.quantum, TimerClock::AfterXrun::restart)
        , writer(std::move(w))
        , queue(size_t{config.rate} * kQueueSeconds * frame_bytes)
        , frame_bytes(frame_bytes)
        , name(config.name) {}

    TimerClock clock;
    audiod::AudioFileWriter writer;
    audiod::SpscQueue<uint8_t> queue;
    uint32_t frame_bytes;
    std::string name;
    const audiod_host* host = nullptr;
    std::thread thread;
    std::atomic<bool> stopping{false};
    std::atomic<uint64_t> dropped_frames{0};
    std::atomic<uint64_t> overflows{0};

    void log(int level, const std::string& message) const {
        if (host != nullptr && host->log != nullptr) {
            host->log(level, "file-sink", (name + ": " + message).c_str());
        }
    }

    // Thread: the writer thread.
    void run_writer() {
        // Whole frames only: the writer takes nothing else.
        std::vector<uint8_t> chunk(size_t{frame_bytes} * (64 * 1024 / frame_bytes + 1));
        bool failed = false;
        for (;;) {
            const bool last = stopping.load(std::memory_order_acquire);
            size_t moved = 0;
            while (const size_t n = queue.try_pop_n(chunk.data(), chunk.size())) {
                moved += n;
                if (!failed) {
                    if (const int rc = writer.append(chunk.data(), n); rc != 0) {
                        failed = true;
                        log(AUDIOD_LOG_ERROR,
                            std::string("writing stopped: ") + std::strerror(-rc));
                    }
                }
            }
            if (moved > 0 && !failed) {
                if (const int rc = writer.flush_header(); rc != 0) {
                    failed = true;
                    log(AUDIOD_LOG_ERROR,
                        std::string("header update failed: ") + std::strerror(-rc));
                }
            }
            if (last) {
                return;
            }
            std::this_thread::sleep_for(kFlushInterval);
        }
    }
};

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

int file_open(const audiod_host* host, const audiod_device_config* config, void** instance,
              audiod_open_info* info, char* error, size_t error_size) {
    const audiod::DeviceOptions options(*config);
    if (const auto refusal = options.check_keys(kOptions, "the file sink")) {
        audiod::set_error(error, error_size, *refusal);
        return -EINVAL;
    }
    uint64_t clock_rate = config->rate;
    if (const auto v = options.get("clock-rate")) {
        if (!audiod::parse_uint(*v, AUDIOD_MAX_RATE, clock_rate) ||
            std::abs(static_cast<double>(clock_rate) / config->rate - 1) > 0.01) {
            audiod::set_error(error, error_size,
                              "clock-rate '" + *v + "' is not within 1 % of the sink's rate " +
                                  std::to_string(config->rate));
            return -EINVAL;
        }
    }
    const auto path = options.get("path");
    if (!path || path->empty()) {
        audiod::set_error(error, error_size, "the file sink needs path = \"FILE.wav\"");
        return -EINVAL;
    }
    const auto container_name = options.get("container");
    const auto container =
        container_name ? audiod::parse_container(*container_name) : audiod::container_for(*path);
    if (!container) {
        audiod::set_error(error, error_size,
                          "container '" + *container_name + "' is not one of wav, flac");
        return -EINVAL;
    }
    const auto format = parse_output_format(options.get("format").value_or("s16le"));
    if (!format) {
        audiod::set_error(error, error_size,
                          "format '" + options.get("format").value_or("") +
                              "' is not one of s16le, s32le, f32le");
        return -EINVAL;
    }
    auto created = audiod::AudioFileWriter::create(
        *path, audiod::AudioFormat{*format, config->rate, config->channels}, *container);
    if (auto* message = std::get_if<std::string>(&created)) {
        audiod::set_error(error, error_size, *path + ": " + *message);
        return -EIO;
    }
    const uint32_t frame_bytes = audiod::sample_bytes(*format) * config->channels;
    auto* sink =
        new (std::nothrow) FileSink(*config, std::move(std::get<audiod::AudioFileWriter>(created)),
                                    frame_bytes, static_cast<uint32_t>(clock_rate));
    if (sink == nullptr) {
        return -ENOMEM;
    }
    sink->host = host;
    try {
        sink->thread = std::thread([sink] { sink->run_writer(); });
    } catch (const std::system_error&) {
        delete sink;
        audiod::set_error(error, error_size, "cannot start the writer thread");
        return -EAGAIN;
    }
    *instance = sink;
    info->format = static_cast<int>(*format);
    info->latency_frames = 0;
    return 0;
}

int file_start(void* instance) {
    static_cast<FileSink*>(instance)->clock.start();
    return 0;
}

int file_wait(void* instance) {
    return static_cast<FileSink*>(instance)->clock.wait();
}

int file_write(void* instance, const void* frames, uint32_t count) {
    auto* sink = static_cast<FileSink*>(instance);
    const size_t bytes = size_t{count} * sink->frame_bytes;
    // Whole frames or nothing, so the file never tears a frame in half.
    if (sink->queue.capacity() - sink->queue.size_approx() < bytes) {
        sink->dropped_frames.fetch_add(count, std::memory_order_relaxed);
        sink->overflows.fetch_add(1, std::memory_order_relaxed);
        return 0;
    }
    sink->queue.try_push_n(static_cast<const uint8_t*>(frames), bytes);
    return 0;
}

void file_stop(void*) {}

void file_close(void* instance) {
    auto* sink = static_cast<FileSink*>(instance);
    sink->stopping.store(true, std::memory_order_release);
    if (sink->thread.joinable()) {
        sink->thread.join();
    }
    if (const int rc = sink->writer.finish(); rc != 0) {
        sink->log(AUDIOD_LOG_ERROR, std::string("closing the file: ") + std::strerror(-rc));
    }
    if (const uint64_t dropped = sink->dropped_frames.load()) {
        sink->log(AUDIOD_LOG_WARNING,
                  "the disk fell behind; dropped " + std::to_string(dropped) + " frames");
    }
    delete sink;
}

uint64_t file_xruns(void* instance) {
    const auto* sink = static_cast<FileSink*>(instance);
    return sink->clock.xruns() + sink->overflows.load(std::memory_order_relaxed);
}

constexpr audiod_sink_ops kOps = {file_open, file_start,         file_wait,  file_write,
                                  file_stop, file_close,         file_xruns, nullptr,
                                  kOptions,  std::size(kOptions)};
constexpr audiod_module kModule = {AUDIOD_MODULE_ABI_VERSION, "file",
                                   "writes the mix to a WAV or FLAC file, paced by a timer", &kOps,
                                   nullptr};

} // namespace

extern "C" __attribute__((visibility("default"))) const audiod_module* audiod_module_entry(void) {
    return &kModule;
}
