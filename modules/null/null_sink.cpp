// The null sink: keeps time like a sound card and discards the mix. It is the
// headless default and the reference for measuring the server's own cost.
#include "audiod/audiod.h"
#include "audiod/module.h"
#include "device_options.h"
#include "timer_clock.h"

#include <cerrno>
#include <new>

namespace {

using audiod::TimerClock;

struct NullSink {
    explicit NullSink(const audiod_device_config& config)
        : clock(config.rate, config.quantum, TimerClock::AfterXrun::restart) {}
    TimerClock clock;
};

int null_open(const audiod_host*, const audiod_device_config* config, void** instance,
              audiod_open_info* info, char* error, size_t error_size) {
    const audiod::DeviceOptions options(*config);
    if (const auto refusal = options.check_keys({}, "the null sink")) {
        audiod::set_error(error, error_size, *refusal);
        return -EINVAL;
    }
    auto* sink = new (std::nothrow) NullSink(*config);
    if (sink == nullptr) {
        return -ENOMEM;
    }
    *instance = sink;
    info->format = AUDIOD_FORMAT_S16LE;
    info->latency_frames = 0;
    return 0;
}

int null_start(void* instance) {
    static_cast<NullSink*>(instance)->clock.start();
    return 0;
}

int null_wait(void* instance) {
    return static_cast<NullSink*>(instance)->clock.wait();
}

int null_write(void*, const void*, uint32_t) {
    return 0;
}

void null_stop(void*) {}

void null_close(void* instance) {
    delete static_cast<NullSink*>(instance);
}

uint64_t null_xruns(void* instance) {
    return static_cast<NullSink*>(instance)->clock.xruns();
}

constexpr audiod_sink_ops kOps = {null_open,  null_start, null_wait, null_write, null_stop,
                                  null_close, null_xruns, nullptr,   nullptr,    0};
constexpr audiod_module kModule = {AUDIOD_MODULE_ABI_VERSION, "null",
                                   "discards audio, paced by a timer", &kOps, nullptr};

} // namespace

extern "C" __attribute__((visibility("default"))) const audiod_module* audiod_module_entry(void) {
    return &kModule;
}
