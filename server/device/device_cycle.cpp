// Device: the real-time cycle. Everything in this file runs on the device's
// RT thread. No cycle allocates, locks, logs, makes a blocking call other
// than the module's `wait`, or waits on a client (device.h; the RT-safety
// test checks it); only run_rt's set-up before the first cycle — naming the
// thread, raising and reporting its priority — may allocate.
#include "device/device.h"
#include "device/rt_support.h"
#include "device/stream.h"
#include "dsp/convert_kernels.h"
#include "dsp/mix_kernels.h"
#include "os/rt_scope.h"
#include "os/scheduling.h"
#include "os/watchdog.h"

#include <algorithm>
#include <cstring>
#include <pthread.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

namespace audiod {

void Device::run_rt(std::promise<std::string>& scheduling) noexcept {
    char thread_name[16] = {};
    std::snprintf(thread_name, sizeof thread_name, "rt:%s", request_.name.c_str());
    pthread_setname_np(pthread_self(), thread_name);
    scheduling.set_value(raise_current_thread_priority(request_.rt_priority));
    const int watchdog_slot = register_rt_thread();
    rt_tid_.store(static_cast<pid_t>(::syscall(SYS_gettid)), std::memory_order_release);

    const DeviceOps& ops = ops_;
    cycle_period_ns_ = uint64_t{request_.format.quantum} * 1'000'000'000u /
                       std::max<uint32_t>(request_.format.rate, 1);
    latency_ns_ = uint64_t{info_.latency_frames} * 1'000'000'000u /
                  std::max<uint32_t>(request_.format.rate, 1);
    // Every call into the module is bracketed, so that the control thread
    // can abandon this thread inside one that does not return (abandon()).
    // Back from a call it was abandoned in, the thread leaves at once,
    // touching nothing of the device's (which may be gone) but the link.
    const std::shared_ptr<RtLink> link = link_;
    const auto enter_module = [&link] {
        link->phase.store(RtLink::in_module, std::memory_order_release);
    };
    const auto back_from_module = [&link] {
        uint8_t expected = RtLink::in_module;
        return link->phase.compare_exchange_strong(expected, RtLink::in_cycle,
                                                   std::memory_order_acq_rel);
    };
    const auto leave_abandoned = [&link, watchdog_slot] {
        unregister_rt_thread(watchdog_slot);
        link->ended.store(true, std::memory_order_release);
    };
    enter_module();
    int rc = ops.start(instance_);
    if (!back_from_module()) {
        return leave_abandoned();
    }
    // When the cycle's first frame is heard, from the module; only once
    // back from the call before it (the device may be gone otherwise).
    const auto media_time = [&](int64_t& media_ns) {
        if (ops.media_time == nullptr) {
            return true;
        }
        enter_module();
        media_ns = ops.media_time(instance_);
        return back_from_module();
    };
    const bool sink = request_.kind == DeviceKind::sink;
    while (rc == 0 && !stop_requested_.load(std::memory_order_acquire)) {
        enter_module();
        rc = ops.wait(instance_);
        if (!back_from_module()) {
            return leave_abandoned();
        }
        if (rc != 0) {
            break;
        }
        // A sink knows when the cycle plays once it is due.
        int64_t media_ns = 0;
        if (sink && !media_time(media_ns)) {
            return leave_abandoned();
        }
        {
            RtScope in_cycle;
            const uint64_t woke_ns = monotonic_ns_rt();
            if (media_ns == 0 && sink) {
                // Heard after the device's own delay, from about now.
                media_ns = static_cast<int64_t>(woke_ns + latency_ns_);
            }
            transfer_->begin_cycle_rt(woke_ns, cycle_period_ns_, media_ns, false);
            apply_commands_rt();
            if (!sink) {
                enter_module();
                rc = ops.read(instance_, output_.data(), request_.format.quantum);
                if (!back_from_module()) {
                    return leave_abandoned();
                }
                // A source knows when what it read is meant to be heard.
                if (rc == 0 && !media_time(media_ns)) {
                    return leave_abandoned();
                }
                transfer_->begin_cycle_rt(woke_ns, cycle_period_ns_, media_ns, true);
                capture_cycle_rt();
            } else {
                mix_cycle_rt();
                enter_module();
                rc = ops.write(instance_, output_.data(), request_.format.quantum);
                if (!back_from_module()) {
                    return leave_abandoned();
                }
            }
            frames_.fetch_add(request_.format.quantum, std::memory_order_relaxed);
            if (events_posted_in_cycle_) {
                events_posted_in_cycle_ = false;
                wake_rt(event_fd_.get());
            }
        }
    }
    if (rc != 0) {
        // Release: the control thread that reads failed() may free this
        // device's streams at once (close_stream, flush), so everything
        // this thread did with them must be seen to come before.
        failed_.store(true, std::memory_order_release);
        post_rt({RtEvent::Kind::device_failed, nullptr, rc});
        wake_rt(event_fd_.get());
    }
    ops.stop(instance_);
    rt_tid_.store(0, std::memory_order_release);
    unregister_rt_thread(watchdog_slot);
    link->ended.store(true, std::memory_order_release);
}

void Device::post_rt(const RtEvent& event) noexcept {
    // The event queue holds four events per possible stream and each stream
    // posts at most one terminal event, so a terminal event always fits.
    if (events_.try_push(event)) {
        events_posted_in_cycle_ = true;
    }
}

void Device::remove_rt(size_t index) noexcept {
    active_[index] = active_[active_count_ - 1];
    --active_count_;
}

void Device::apply_commands_rt() noexcept {
    RtCommand command;
    while (commands_.try_pop(command)) {
        Stream* stream = command.stream;
        switch (command.kind) {
        case RtCommand::Kind::attach:
            if (active_count_ < kMaxStreams) {
                active_[active_count_++] = stream;
            } else {
                // The control thread keeps count and never sends more; if it
                // did, hand the stream straight back rather than lose it.
                post_rt({RtEvent::Kind::detached, stream, 0});
            }
            break;
        case RtCommand::Kind::detach:
            for (size_t i = 0; i < active_count_; ++i) {
                if (active_[i] == stream) {
                    remove_rt(i);
                    break;
                }
            }
            post_rt({RtEvent::Kind::detached, stream, 0});
            break;
        case RtCommand::Kind::stream_gain:
            if (stream->rt.started) {
                stream->rt.gain.set_target(command.gain, ramp_frames_);
            } else {
                stream->rt.gain.reset(command.gain);
            }
            break;
        case RtCommand::Kind::pause:
            stream->rt.paused = true;
            break;
        case RtCommand::Kind::resume:
            stream->rt.paused = false;
            break;
        case RtCommand::Kind::device_gain:
            device_gain_.set_target(command.gain, ramp_frames_);
            break;
        case RtCommand::Kind::flush:
            flush_stream(*stream, command.position);
            wake_rt(stream->wake_fd.get()); // the room the client waits for is there
            break;
        }
    }
}

void Device::mix_cycle_rt() noexcept {
    const DeviceFormat& fmt = request_.format;
    const size_t samples = size_t{fmt.quantum} * fmt.channels;
    std::fill(bus_.begin(), bus_.end(), 0.0f);

    const uint64_t sink_frame = frames_.load(std::memory_order_relaxed);
    for (size_t i = 0; i < active_count_;) {
        Stream& stream = *active_[i];
        if (stream.record) {
            ++i; // fed below, from what the sink plays
            continue;
        }
        transfer_->pull_rt(stream, bus_.data(), sink_frame);
        if (stream.rt.broken) {
            remove_rt(i);
            post_rt({RtEvent::Kind::broken, &stream, 0});
            continue;
        }
        ++i;
    }

    apply_device_gain_rt();

    switch (sample_format_) {
    case SampleFormat::s16le:
        mix::bus_to_s16(reinterpret_cast<int16_t*>(output_.data()), bus_.data(), samples);
        break;
    case SampleFormat::s32le:
        mix::bus_to_s32(reinterpret_cast<int32_t*>(output_.data()), bus_.data(), samples);
        break;
    default:
        mix::bus_to_f32(reinterpret_cast<float*>(output_.data()), bus_.data(), samples);
        break;
    }

    // The monitor: record streams get exactly what is played.
    feed_recorders_rt(sink_frame);
}

void Device::capture_cycle_rt() noexcept {
    const DeviceFormat& fmt = request_.format;
    const uint64_t sink_frame = frames_.load(std::memory_order_relaxed);
    mix::decode_frames(sample_format_, output_.data(), fmt.quantum, identity_mix_, bus_.data());
    apply_device_gain_rt();
    feed_recorders_rt(sink_frame);
}

void Device::apply_device_gain_rt() noexcept {
    apply_gain_rt(bus_.data(), request_.format.quantum, request_.format.channels, device_gain_);
}

void Device::feed_recorders_rt(uint64_t sink_frame) noexcept {
    for (size_t i = 0; i < active_count_;) {
        Stream& stream = *active_[i];
        if (stream.record) {
            transfer_->push_rt(stream, bus_.data(), sink_frame);
            if (stream.rt.broken) {
                remove_rt(i);
                post_rt({RtEvent::Kind::broken, &stream, 0});
                continue;
            }
        }
        ++i;
    }
}

} // namespace audiod
