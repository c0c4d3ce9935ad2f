// The null sink: keeps time like a sound card and discards the mix. It is the
// headless default and the reference for measuring the server's own cost.
// Its clock can be set off the nominal rate (clock_drift.h), for tests of
// what follows a sink's clock.
#include "audiod/audiod.h"
#include "audiod/module.h"
#include "clock_drift.h"
#include "device_options.h"
#include "module_ops.h"
#include "timer_clock.h"

#include <memory>
#include <string>

namespace {

using audiod::TimerClock;

class NullSink : public audiod::TimerPaced {
public:
    NullSink(const audiod_device_config& config, audiod::ClockDrift drift)
        : TimerPaced(config.rate, config.quantum, TimerClock::AfterXrun::restart, drift) {}

    // Thread: control.
    static std::unique_ptr<NullSink> open(const audiod::OpenRequest& request,
                                          audiod_open_info* info, std::string* error, int* code) {
        const audiod::DeviceOptions options(request.config);
        if (auto refusal = options.check_keys(audiod::kClockDriftOptions, "the null sink")) {
            return audiod::refuse(error, code, std::move(*refusal), -EINVAL);
        }
        auto drift = audiod::read_clock_drift(options);
        if (auto* refusal = std::get_if<std::string>(&drift)) {
            return audiod::refuse(error, code, std::move(*refusal), -EINVAL);
        }
        info->format = AUDIOD_FORMAT_S16LE;
        info->latency_frames = 0;
        return std::make_unique<NullSink>(request.config, std::get<audiod::ClockDrift>(drift));
    }

    // Thread: rt.
    int write_rt(const void*, uint32_t) noexcept { return 0; }
    void stop_rt() noexcept {}
};

constexpr audiod_module kModule = audiod::make_module<NullSink, audiod::kClockDriftOptions>(
    "null", "discards audio, paced by a timer");

} // namespace

extern "C" __attribute__((visibility("default"))) const audiod_module* audiod_module_entry(void) {
    return &kModule;
}
