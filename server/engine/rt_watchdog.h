// The RT watchdog: finds devices whose RT thread stopped completing cycles.
// One that completes none for kRtWatchdogTimeout is stalled: it is demoted
// to SCHED_OTHER (a bug on an RT thread must never freeze the machine) and
// announced, and new streams are placed elsewhere (engine/router.h). One
// that has been inside a call into its module for kRtAbandonTimeout is
// given up: the engine fails it, and its streams move to another device. A
// stalled device that completes cycles again is announced as running, and
// the streams that belong there come back. RLIMIT_RTTIME firing demotes
// every RT thread. Thread: control (from the engine's tick).
#pragma once

#include "engine/announcer.h"
#include "engine/device_registry.h"

#include <chrono>
#include <cstdint>
#include <vector>

namespace audiod {

// A device whose RT thread completes no cycle for this long is demoted.
inline constexpr auto kRtWatchdogTimeout = std::chrono::milliseconds(1000);
// One whose RT thread has been inside a call into its module (a driver that
// does not return) this long is given up: it fails, and its streams move
// to another sink. Long enough that a loaded machine's slow cycles never
// come near it: clients already keep their own clock after 500 ms.
inline constexpr auto kRtAbandonTimeout = std::chrono::milliseconds(4000);
// The watchdog looks at least every 200 ms; a longer gap means the whole
// server was held (SIGSTOP, a debugger, a frozen VM, a machine too loaded to
// run it), and the devices' silence is counted afresh.
inline constexpr auto kWatchdogHeldAfter = std::chrono::milliseconds(500);

class RtWatchdog {
public:
    RtWatchdog(DeviceRegistry& devices, const Announcer& announcer);

    // What a look found, for the engine to act on.
    struct Findings {
        std::vector<Device*> recovered; // completes cycles again
        std::vector<Device*> abandoned; // given up: handle as failed
    };
    [[nodiscard]] Findings check(std::chrono::steady_clock::time_point now);

private:
    DeviceRegistry& devices_;
    const Announcer& announcer_;
    uint64_t rt_time_demotions_seen_ = 0;
    std::chrono::steady_clock::time_point last_look_{}; // long ago: the first look is held
};

} // namespace audiod
