// Device: the control-thread side (open, start, stop, queues).
// The RT cycle lives in sink_rt.cpp.
#include "device/device.h"
#include "audiod/audiod.h"
#include "device/stream.h"
#include "os/memory_lock.h"
#include "os/watchdog.h"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <future>
#include <sys/eventfd.h>
#include <unistd.h>

namespace audiod {

namespace {

// Queue sizes: commands and events are rare (a few per client request), so
// these are generous; the bound matters only if the RT thread stops.
constexpr size_t kCommandQueueSize = 1024;
constexpr size_t kEventQueueSize = 4 * Device::kMaxStreams;

bool is_output_format(SampleFormat format) {
    return format == SampleFormat::s16le || format == SampleFormat::s32le ||
           format == SampleFormat::f32le;
}

} // namespace

Device::Device(const audiod_module& module, DeviceRequest request)
    : module_(module)
    , request_(std::move(request))
    , commands_(kCommandQueueSize)
    , events_(kEventQueueSize) {}

std::variant<std::unique_ptr<Device>, std::string>
Device::open(const audiod_module& module, const audiod_host& host, DeviceRequest request) {
    std::unique_ptr<Device> sink(new Device(module, std::move(request)));
    const DeviceRequest& req = sink->request_;

    std::vector<audiod_option> options;
    options.reserve(req.options.size());
    for (const auto& [key, value] : req.options) {
        options.push_back({key.c_str(), value.c_str()});
    }
    const audiod_device_config config{req.name.c_str(),   req.format.rate, req.format.channels,
                                      req.format.quantum, options.data(),  options.size()};
    char error[512] = {};
    if (req.kind == DeviceKind::source ? module.source == nullptr : module.sink == nullptr) {
        return std::string("module '") + module.name + "' provides no " +
               (req.kind == DeviceKind::source ? "source" : "sink");
    }
    DeviceOps& ops = sink->ops_;
    int rc = 0;
    if (req.kind == DeviceKind::source) {
        const audiod_source_ops& s = *module.source;
        ops = {s.start, s.wait,  nullptr,    s.read,       s.stop,
               s.close, s.xruns, s.describe, s.media_time, s.playout};
        rc = s.open(&host, &config, &sink->instance_, &sink->info_, error, sizeof error);
    } else {
        const audiod_sink_ops& s = *module.sink;
        ops = {s.start, s.wait,     s.write,      nullptr, s.stop,   s.close,
               s.xruns, s.describe, s.media_time, nullptr, s.control};
        rc = s.open(&host, &config, &sink->instance_, &sink->info_, error, sizeof error);
    }
    if (rc != 0) {
        return std::string(error[0] != '\0' ? error : std::strerror(-rc));
    }
    sink->sample_format_ = static_cast<SampleFormat>(sink->info_.format);
    if (!is_output_format(sink->sample_format_)) {
        // The module is ours or a third party's; either way refuse cleanly.
        return std::string("module '") + module.name + "' asked for unsupported output format " +
               std::string(format_name(sink->sample_format_));
    }

    sink->event_fd_.reset(::eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC));
    if (!sink->event_fd_) {
        return std::string("eventfd: ") + std::strerror(errno);
    }
    const size_t samples = size_t{req.format.quantum} * req.format.channels;
    sink->active_ = std::make_unique<Stream*[]>(kMaxStreams);
    sink->bus_.assign(samples, 0.0f);
    sink->output_.assign(samples * sample_bytes(sink->sample_format_), 0);
    sink->ramp_frames_ = std::max<uint32_t>(1, req.format.rate * kRampMs / 1000);
    sink->transfer_ = std::make_unique<StreamTransfer>(req.format);
    sink->identity_mix_ = make_channel_mix(req.format.channels, req.format.channels);
    // What every cycle touches stays in RAM.
    lock_memory(sink->active_.get(), kMaxStreams * sizeof(Stream*));
    lock_memory(sink->bus_.data(), sink->bus_.size() * sizeof(float));
    lock_memory(sink->output_.data(), sink->output_.size());
    return sink;
}

Device::~Device() {
    const bool stuck_in_module = stuck();
    stop();
    if (active_) {
        unlock_memory(active_.get(), kMaxStreams * sizeof(Stream*));
        unlock_memory(bus_.data(), bus_.size() * sizeof(float));
        unlock_memory(output_.data(), output_.size());
    }
    if (stuck_in_module) {
        // The module call still runs with the instance and this buffer:
        // both are left to it, kept where leak checkers see them.
        static auto* const left_to_stuck_threads = new std::vector<std::vector<uint8_t>>;
        left_to_stuck_threads->push_back(std::move(output_));
        return;
    }
    if (instance_ != nullptr) {
        ops_.close(instance_);
    }
}

Status Device::start() {
    if (thread_.joinable()) {
        return Status::success();
    }
    stop_requested_.store(false);
    link_ = std::make_shared<RtLink>();
    // The watchdog measures silence from now, not from the epoch.
    progress = {frames_played(), std::chrono::steady_clock::now(), false};
    // The thread raises its own priority, then reports what it got before it
    // enters the cycle; waiting for that here is brief and keeps
    // `scheduling_` a plain string owned by the control thread.
    std::promise<std::string> scheduling;
    auto reported = scheduling.get_future();
    try {
        thread_ = std::thread([this, p = std::move(scheduling)]() mutable { run_rt(p); });
    } catch (const std::system_error& e) {
        return Status::failure(std::string("cannot start the device's thread: ") + e.what());
    }
    scheduling_ = reported.get();
    return Status::success();
}

void Device::stop() {
    if (!thread_.joinable()) {
        return;
    }
    if (stuck()) {
        thread_.detach(); // it ends when its module call returns
        return;
    }
    stop_requested_.store(true, std::memory_order_release);
    thread_.join();
}

void Device::release() {
    if (stuck()) {
        return; // later: the module call still uses the instance
    }
    stop();
    if (instance_ != nullptr) {
        released_xruns_ = xruns();
        released_details_ = details();
        ops_.close(instance_);
        instance_ = nullptr;
    }
}

bool Device::abandon() noexcept {
    uint8_t expected = RtLink::in_module;
    if (!link_->phase.compare_exchange_strong(expected, RtLink::abandoned,
                                              std::memory_order_acq_rel)) {
        return false;
    }
    failed_.store(true, std::memory_order_release);
    return true;
}

bool Device::abandoned() const noexcept {
    return link_->phase.load(std::memory_order_acquire) == RtLink::abandoned;
}

bool Device::rt_ended() const noexcept {
    return link_->ended.load(std::memory_order_acquire);
}

bool Device::send(const RtCommand& command) noexcept {
    return commands_.try_push(command);
}

size_t Device::take_events(RtEvent* out, size_t max) noexcept {
    uint64_t count = 0;
    [[maybe_unused]] const ssize_t r = ::read(event_fd_.get(), &count, sizeof count);
    return events_.try_pop_n(out, max);
}

void Device::demote(const std::string& reason) {
    if (const pid_t tid = rt_tid(); tid != 0) {
        demote_thread(tid);
    }
    scheduling_ = "SCHED_OTHER (demoted: " + reason + ")";
}

uint64_t Device::xruns() const noexcept {
    if (instance_ == nullptr) {
        return released_xruns_;
    }
    return ops_.xruns != nullptr ? ops_.xruns(instance_) : 0;
}

void Device::tell_playout(const audiod_playout& playout) {
    if (instance_ != nullptr && ops_.playout != nullptr && !failed()) {
        ops_.playout(instance_, &playout);
    }
}

std::string Device::control(const std::string& request) {
    if (instance_ == nullptr || failed()) {
        return "it is not running";
    }
    if (ops_.control == nullptr) {
        return std::string("a ") + module_.name + " " +
               (request_.kind == DeviceKind::source ? "source" : "sink") + " takes no requests";
    }
    char error[512] = {};
    const int rc = ops_.control(instance_, request.c_str(), error, sizeof error);
    if (rc == 0) {
        return {};
    }
    error[sizeof error - 1] = '\0';
    return error[0] != '\0' ? std::string(error) : std::string(std::strerror(-rc));
}

std::string Device::details() const {
    if (instance_ == nullptr) {
        return released_details_;
    }
    if (ops_.describe == nullptr) {
        return "";
    }
    char text[kMaxDetails];
    text[0] = '\0';
    const size_t size = ops_.describe(instance_, text, sizeof text);
    text[sizeof text - 1] = '\0'; // a module that forgets the NUL
    return std::string(text, std::min(size, std::strlen(text)));
}

} // namespace audiod
