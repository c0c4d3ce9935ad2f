// The file sink: writes the sink's mix to a WAV or FLAC file, paced by a
// timer like a sound card.
//
//   [sinks.recorder]
//   type = "file"
//   path = "/tmp/mix.flac"  # kOptions below lists every option
//
// `clock-ppm` (clock_drift.h) makes the sink stand in for a sound card
// whose crystal is off: it takes frames at that pace while the file says
// the sink's rate, as a real card's clock never quite matches the system's.
// `play-times` writes beside the file when its frames "play": lines
// "FRAME NS", frame FRAME of the file at CLOCK_MONOTONIC_RAW NS, every
// tenth of a second and wherever the timeline restarts or frames were
// dropped, so that a test can tell when each sample was heard on a clock
// nothing steers (the test rig's rooms are measured by it).
// The RT thread only copies each quantum into a lock-free queue; a writer
// thread of the module's own moves it to disk (common/audio_file.h) and, for
// a WAV, rewrites the header after every flush, so the file is valid after a
// clean stop and readable up to the last flush (at most kFlushInterval old)
// after a crash.
#include "audiod/audiod.h"
#include "audiod/module.h"
#include "clock_drift.h"
#include "common/audio_file.h"
#include "common/spsc_queue.h"
#include "device_options.h"
#include "module_ops.h"
#include "monotonic_time.h"
#include "timer_clock.h"

#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdio>
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

constexpr audiod_option_spec kFileOptions[] = {
    {"path", "string", nullptr, "", "the file to write (required)"},
    {"format", "enum", "s16le", "s16le|s32le|f32le", "the file's sample format"},
    {"container", "enum", nullptr, "wav|flac",
     "the file's kind; default: flac if the path ends in .flac, else wav"},
    {"play-times", "string", nullptr, "",
     "a file to write lines \"FRAME NS\" to: frame FRAME of the file plays at "
     "CLOCK_MONOTONIC_RAW NS (for measuring when each sample is heard)"},
};
constexpr auto kOptions = audiod::join_options(kFileOptions, audiod::kClockDriftOptions);

// Where one frame of the file plays, on CLOCK_MONOTONIC_RAW.
struct PlayTime {
    uint64_t frame;
    int64_t raw_ns;
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
             audiod::AudioFileWriter&& writer, uint32_t frame_bytes, audiod::ClockDrift drift)
        : TimerPaced(config.rate, config.quantum, TimerClock::AfterXrun::restart, drift)
        , writer_(std::move(writer))
        , queue_(size_t{config.rate} * kQueueSeconds * frame_bytes)
        , play_times_(kPlayTimeSlots)
        , frame_bytes_(frame_bytes)
        , mark_frames_(config.rate / 10)
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
    void write_play_times();
    // Notes where the quantum about to be queued plays, when it is time to. Thread: rt.
    void note_play_time_rt() noexcept;

    // A tenth of a second's marks need one slot; this many absorb a disk
    // stall as long as the audio queue does.
    static constexpr size_t kPlayTimeSlots = kQueueSeconds * 10 * 4;

    audiod::AudioFileWriter writer_;
    audiod::SpscQueue<uint8_t> queue_;
    audiod::SpscQueue<PlayTime> play_times_;
    FILE* play_times_file_ = nullptr;
    // Thread: rt.
    uint64_t frames_queued_ = 0;
    uint64_t next_mark_ = 0;
    uint64_t restarts_seen_ = 0;
    bool mark_next_ = true;
    uint32_t frame_bytes_;
    uint32_t mark_frames_;
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
    auto drift = audiod::read_clock_drift(options);
    if (auto* refusal = std::get_if<std::string>(&drift)) {
        return refuse(error, code, std::move(*refusal), -EINVAL);
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
        audiod::sample_bytes(*format) * config.channels, std::get<audiod::ClockDrift>(drift));
    if (const auto times = options.get("play-times")) {
        sink->play_times_file_ = std::fopen(times->c_str(), "we");
        if (sink->play_times_file_ == nullptr) {
            return refuse(error, code, *times + ": " + std::strerror(errno), -EIO);
        }
        std::fprintf(sink->play_times_file_, "# frame monotonic-raw-ns\n");
    }
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
    if (play_times_file_ != nullptr) {
        std::fclose(play_times_file_);
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
        mark_next_ = true; // the frames after the gap play later than they follow
        return 0;
    }
    if (play_times_file_ != nullptr) {
        note_play_time_rt();
    }
    queue_.try_push_n(static_cast<const uint8_t*>(frames), bytes);
    frames_queued_ += count;
    return 0;
}

void FileSink::note_play_time_rt() noexcept {
    if (clock().restarts() != restarts_seen_) {
        restarts_seen_ = clock().restarts();
        mark_next_ = true;
    }
    if (!mark_next_ && frames_queued_ < next_mark_) {
        return;
    }
    // The quantum plays when its cycle was due, on the timer's clock
    // (CLOCK_MONOTONIC, which NTP or ptp4l may slew); told on the raw one.
    const int64_t monotonic = audiod::monotonic_ns();
    const int64_t raw = audiod::clock_ns(CLOCK_MONOTONIC_RAW);
    if (play_times_.try_push(
            PlayTime{frames_queued_, raw - (monotonic - clock().cycle_due_ns())})) {
        mark_next_ = false;
        next_mark_ = frames_queued_ + mark_frames_;
    }
}

void FileSink::write_play_times() {
    PlayTime time{};
    bool wrote = false;
    while (play_times_.try_pop(time)) {
        std::fprintf(play_times_file_, "%llu %lld\n", static_cast<unsigned long long>(time.frame),
                     static_cast<long long>(time.raw_ns));
        wrote = true;
    }
    if (wrote) {
        std::fflush(play_times_file_);
    }
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
        if (play_times_file_ != nullptr) {
            write_play_times();
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
