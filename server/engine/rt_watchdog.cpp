#include "engine/rt_watchdog.h"

#include "log.h"
#include "os/watchdog.h"

namespace audiod {

namespace {

// "4000 ms", for the watchdog's messages.
std::string ms_text(std::chrono::steady_clock::duration duration) {
    return std::to_string(std::chrono::duration_cast<std::chrono::milliseconds>(duration).count()) +
           " ms";
}

} // namespace

RtWatchdog::RtWatchdog(DeviceRegistry& devices, const Announcer& announcer)
    : devices_(devices)
    , announcer_(announcer) {}

RtWatchdog::Findings RtWatchdog::check(std::chrono::steady_clock::time_point now) {
    Findings findings;
    if (const uint64_t demotions = rt_time_demotions(); demotions != rt_time_demotions_seen_) {
        rt_time_demotions_seen_ = demotions;
        log_error("watchdog", "RLIMIT_RTTIME: a real-time thread ran too long without "
                              "blocking; all RT threads were demoted to SCHED_OTHER");
        for (const auto& entry : devices_.entries()) {
            entry->device->demote("RLIMIT_RTTIME");
        }
    }
    // A device's silence counts only over time this thread saw pass (from
    // its first look on). Held itself, it cannot tell a stuck RT thread from
    // one held alike and not yet run again: after an 8 s SIGSTOP, a first
    // look that came before the sinks' first cycles found them stalled and
    // gave them up, and a stream made anew for the null sink of a test
    // landed on its file sink, mixed into the signal the test checks.
    const bool held = now - last_look_ > kWatchdogHeldAfter;
    last_look_ = now;
    for (const auto& entry : devices_.entries()) {
        Device& device = *entry->device;
        const std::string what = std::string(device_kind_name(device.kind())) + " " + device.name();
        DeviceRegistry::Entry::Progress& progress = entry->progress;
        const uint64_t frames = device.frames_played();
        if (frames != progress.frames || device.failed() || device.rt_tid() == 0) {
            const bool recovered = progress.stalled && !device.failed();
            progress = {frames, now, false};
            if (recovered) {
                log_info("watchdog", what + " completes cycles again");
                announcer_.device_state(device, "running");
                findings.recovered.push_back(&device);
            }
            continue;
        }
        if (held) {
            progress.since = now;
            continue;
        }
        if (!progress.stalled && now - progress.since >= kRtWatchdogTimeout) {
            progress.stalled = true;
            const bool was_realtime = is_realtime(device.rt_tid());
            const std::string limit = ms_text(kRtWatchdogTimeout);
            device.demote("no cycle completed for " + limit);
            log_error("watchdog", what + ": the RT thread completed no cycle for " + limit +
                                      (was_realtime ? "; demoted to SCHED_OTHER" : ""));
            announcer_.device_state(device, "stalled");
        }
        if (progress.stalled && now - progress.since >= kRtAbandonTimeout && device.abandon()) {
            log_error("watchdog", what + ": the RT thread has been inside a call into the " +
                                      device.type() + " module for " + ms_text(kRtAbandonTimeout) +
                                      "; given up: it fails, its streams move to another device, "
                                      "and it is reopened once that call returns");
            findings.abandoned.push_back(&device);
        }
    }
    return findings;
}

} // namespace audiod
