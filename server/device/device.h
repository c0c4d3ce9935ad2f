// A device: a sink (an output: a sound card, a file, nothing) or a source
// (an input: a capture device), driven by its own clock, and the real-time
// thread that runs its cycle. This is the boundary between the control
// thread and the RT thread.
//
// Design. The device's module owns the clock: `wait` returns when the
// device wants (or has) the next quantum. Each cycle of a sink's RT thread
// applies queued commands, pulls at most one quantum from every attached
// playback stream's ring (a short ring gives silence and an underrun for
// that stream alone — the thread never waits for a client), mixes in float32
// with ramped gains, applies the device gain, converts to the device format
// and writes; then it feeds what it played to the record streams on its
// monitor. A source's cycle reads a quantum and feeds its record streams.
// The control thread talks to the RT thread only through two bounded SPSC
// queues of fixed-size messages (device/messages.h); the RT thread wakes the
// control thread through an eventfd only when it has posted an event.
//
// The RT thread must never: allocate or free, lock a mutex, log, do blocking
// I/O, or wait on a client. Everything it touches is allocated in open().
#pragma once

#include "audiod/module.h"
#include "common/spsc_queue.h"
#include "common/status.h"
#include "device/device_format.h"
#include "device/messages.h"
#include "device/stream_transfer.h"
#include "dsp/channel_mix.h"
#include "dsp/gain_ramp.h"
#include "protocol/sample_format.h"
#include "protocol/unique_fd.h"

#include <atomic>
#include <chrono>
#include <future>
#include <memory>
#include <string>
#include <sys/types.h>
#include <thread>
#include <utility>
#include <variant>
#include <vector>

namespace audiod {

struct Stream;

// What a device is: a sink plays the mix of its playback streams (and is
// recorded through its monitor); a source captures, through the module's
// source ops, and only feeds record streams.
enum class DeviceKind : uint8_t { sink, source };
[[nodiscard]] constexpr const char* device_kind_name(DeviceKind kind) noexcept {
    return kind == DeviceKind::source ? "source" : "sink";
}

struct DeviceRequest {
    std::string name;
    std::string type;
    DeviceKind kind = DeviceKind::sink;
    DeviceFormat format;
    std::vector<std::pair<std::string, std::string>> options;
    int rt_priority = 0; // SCHED_FIFO priority to ask for; 0: none
};

class Device {
public:
    static constexpr size_t kMaxStreams = 256;
    // Gain changes ramp over this long: short enough to feel immediate, long
    // enough that a step from full scale to silence does not click.
    static constexpr uint32_t kRampMs = 5;
    // Client rates the server converts from.

    // Opens the device through its module. Thread: control.
    static std::variant<std::unique_ptr<Device>, std::string>
    open(const audiod_module& module, const audiod_host& host, DeviceRequest request);

    Device(const Device&) = delete;
    Device& operator=(const Device&) = delete;
    // Stops the RT thread if it runs and closes the device. Streams still
    // attached are not freed here: the Engine owns them. Thread: control.
    ~Device();

    // Starts the RT thread. Thread: control.
    Status start();
    // Asks the RT thread to finish its cycle and stop, and joins it. Thread: control.
    void stop();
    // After a failure: stops the RT thread and closes the module's instance
    // now, not when a reopened device replaces this one, so that the
    // module can open the device afresh (PortAudio lists devices anew only
    // once no stream holds it). Its last xrun count and details stay
    // readable. Thread: control.
    void release();
    // After release(): shows the device as failed, so that the engine
    // reopens it once a second like a device that was unplugged (a reload
    // whose settings cannot be opened now). Thread: control.
    void mark_failed() noexcept { failed_.store(true, std::memory_order_release); }
    // Gives up on an RT thread stuck inside a call into its module (a driver
    // that does not return), so that the engine may hand the streams to
    // other devices: from then on the thread touches nothing of this
    // device's, and when the call returns it ends at once. The device shows
    // as failed. Its module instance stays open, since the call still uses
    // it, until the thread has ended (rt_ended()); release() closes it only
    // then. Destroying the device before that leaves the instance and the
    // buffer the call uses to the thread, and does not wait for it. False
    // when the thread is not inside a module call (its own cycle always
    // ends). Thread: control.
    bool abandon() noexcept;
    [[nodiscard]] bool abandoned() const noexcept;
    // Whether the RT thread has ended (for an abandoned one: its module call
    // returned). Thread: control.
    [[nodiscard]] bool rt_ended() const noexcept;

    // Queues a command for the RT thread; false if the queue is full (the RT
    // thread is not keeping up). Thread: control.
    [[nodiscard]] bool send(const RtCommand& command) noexcept;
    // Readable when the RT thread has posted events. Thread: control.
    [[nodiscard]] int event_fd() const noexcept { return event_fd_.get(); }
    // Takes posted events and clears the eventfd. Thread: control.
    size_t take_events(RtEvent* out, size_t max) noexcept;

    [[nodiscard]] const std::string& name() const noexcept { return request_.name; }
    [[nodiscard]] const std::string& type() const noexcept { return request_.type; }
    [[nodiscard]] DeviceKind kind() const noexcept { return request_.kind; }
    [[nodiscard]] bool is_source() const noexcept { return request_.kind == DeviceKind::source; }
    [[nodiscard]] const DeviceFormat& format() const noexcept { return request_.format; }
    [[nodiscard]] SampleFormat sample_format() const noexcept { return sample_format_; }
    [[nodiscard]] uint32_t latency_frames() const noexcept { return info_.latency_frames; }
    // A gain change ramps over this many frames (kRampMs at the device's rate).
    [[nodiscard]] uint32_t ramp_frames() const noexcept { return ramp_frames_; }
    // The most input frames one cycle may take from a stream (at the
    // highest stream rate). Thread: any.
    [[nodiscard]] uint32_t max_input_frames() const noexcept {
        return transfer_->max_input_frames();
    }
    // Frames the cycle has played (or captured). Thread: any (an atomic the
    // RT thread bumps).
    [[nodiscard]] uint64_t frames_played() const noexcept {
        return frames_.load(std::memory_order_relaxed);
    }
    // The module's count of device xruns. Thread: any: the module keeps it
    // readable while its RT thread runs (audiod/module.h, `xruns`).
    [[nodiscard]] uint64_t xruns() const noexcept;
    // The module's own "key=value" lines for `audioctl list` (its optional
    // `describe`), or "". Thread: control, while the RT thread runs.
    [[nodiscard]] std::string details() const;
    // Tells a source how its audio plays (audiod_source_ops.playout), if it
    // listens and its instance is open. Thread: control.
    void tell_playout(const audiod_playout& playout);
    // A request of the module's own ("key=value" lines: audiod_sink_ops
    // `control`): "" when done, else why not. Thread: control.
    [[nodiscard]] std::string control(const std::string& request);
    static constexpr size_t kMaxDetails = 1024; // what the wire carries of a string
    // Whether the RT thread stopped on a device error. Thread: any (atomic).
    // True means the RT thread is done with the device's streams, and
    // everything it did with them is visible here (acquire; the RT thread
    // stores it with release after its last cycle): the control thread
    // may then free or flush a stream itself.
    [[nodiscard]] bool failed() const noexcept { return failed_.load(std::memory_order_acquire); }
    // The scheduling in force, for `audioctl info`. Thread: control: only
    // start() and demote() write it, both on the control thread; the RT
    // thread hands its part over once, through a promise, before its first
    // cycle.
    [[nodiscard]] const std::string& scheduling() const noexcept { return scheduling_; }
    // The RT thread's kernel id while it runs, else 0. Thread: any.
    [[nodiscard]] pid_t rt_tid() const noexcept { return rt_tid_.load(std::memory_order_acquire); }
    // Drops the RT thread to SCHED_OTHER (the watchdog found it stuck, or
    // RLIMIT_RTTIME fired) and records why. Thread: control.
    void demote(const std::string& reason);

    // The watchdog's view of progress. Thread: control.
    struct Progress {
        uint64_t frames = 0;
        std::chrono::steady_clock::time_point since{};
        bool stalled = false;
    } progress;

    // Control-side bookkeeping. Thread: control.
    float volume = 1.0f;
    bool muted = false;
    size_t attached_streams = 0;
    // The engine has handled the failure (logged it, rescued the streams):
    // only then is the device reopened. failed() comes first, from the RT
    // thread, a moment before its event.
    bool failure_announced = false;

private:
    Device(const audiod_module& module, DeviceRequest request);

    // ---- Thread: rt ------------------------------------------------------
    void run_rt(std::promise<std::string>& scheduling) noexcept;
    void apply_commands_rt() noexcept;
    void mix_cycle_rt() noexcept;
    // A source's cycle: the captured quantum in output_ onto the bus.
    void capture_cycle_rt() noexcept;
    void apply_device_gain_rt() noexcept;
    void feed_recorders_rt(uint64_t sink_frame) noexcept;
    void remove_rt(size_t index) noexcept;
    void post_rt(const RtEvent& event) noexcept;

    const audiod_module& module_;
    DeviceRequest request_;
    // The module's functions for this direction: its sink ops, or for a
    // source its source ops (`read` in place of `write`).
    struct DeviceOps {
        int (*start)(void*) = nullptr;
        int (*wait)(void*) = nullptr;
        int (*write)(void*, const void*, uint32_t) = nullptr;
        int (*read)(void*, void*, uint32_t) = nullptr;
        void (*stop)(void*) = nullptr;
        void (*close)(void*) = nullptr;
        uint64_t (*xruns)(void*) = nullptr;
        size_t (*describe)(void*, char*, size_t) = nullptr;
        int64_t (*media_time)(void*) = nullptr;
        void (*playout)(void*, const audiod_playout*) = nullptr;
        int (*control)(void*, const char*, char*, size_t) = nullptr;
    } ops_;
    void* instance_ = nullptr;
    uint64_t released_xruns_ = 0;  // what xruns() said when the instance was closed
    std::string released_details_; // and details()
    audiod_open_info info_{};
    SampleFormat sample_format_ = SampleFormat::invalid;
    uint32_t ramp_frames_ = 0;

    SpscQueue<RtCommand> commands_;
    SpscQueue<RtEvent> events_;
    UniqueFd event_fd_;
    bool events_posted_in_cycle_ = false;

    // Preallocated in open(); owned by the RT thread while it runs.
    std::unique_ptr<Stream*[]> active_;
    size_t active_count_ = 0;
    std::vector<float> bus_;
    std::vector<uint8_t> output_;
    // Each stream's part of the cycle: its ring to the bus or back.
    std::unique_ptr<StreamTransfer> transfer_;
    ChannelMix identity_mix_; // a source's device frames onto the bus
    GainRamp device_gain_;
    // How long a cycle lasts, published to self-timed writers (ring_layout.h).
    uint64_t cycle_period_ns_ = 0;
    // The device's own delay (info_.latency_frames), in ns.
    uint64_t latency_ns_ = 0;

    // Where the RT thread is, for abandon(). Shared with the thread, which
    // may come back from its module after the device is gone.
    struct RtLink {
        enum Phase : uint8_t { in_cycle, in_module, abandoned };
        std::atomic<uint8_t> phase{in_cycle};
        std::atomic<bool> ended{false};
    };
    // An abandoned thread still inside its module call. Thread: control.
    [[nodiscard]] bool stuck() const noexcept { return abandoned() && !rt_ended(); }

    std::shared_ptr<RtLink> link_ = std::make_shared<RtLink>();
    std::thread thread_;
    std::string scheduling_ = "not started";
    std::atomic<bool> stop_requested_{false};
    std::atomic<bool> failed_{false};
    std::atomic<uint64_t> frames_{0};
    std::atomic<pid_t> rt_tid_{0};
};

} // namespace audiod
