// Device: the real-time cycle. Everything in this file runs on the device's
// RT thread. No cycle allocates, locks, logs, makes a blocking call other
// than the module's `wait`, or waits on a client (device.h; the RT-safety
// test checks it); only run_rt's set-up before the first cycle — naming the
// thread, raising and reporting its priority — may allocate.
#include "device/device.h"
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

namespace {

void wake(int fd) noexcept {
    const uint64_t one = 1;
    // Non-blocking eventfd: this can only fail if the counter is about to
    // overflow, i.e. the reader is long gone; dropping the wake-up is right.
    [[maybe_unused]] const ssize_t r = ::write(fd, &one, sizeof one);
}

// CLOCK_MONOTONIC, the clock of the clients' steady_clock; read through
// the vDSO, no system call.
uint64_t monotonic_ns() noexcept {
    timespec now{};
    ::clock_gettime(CLOCK_MONOTONIC, &now);
    return static_cast<uint64_t>(now.tv_sec) * 1'000'000'000u + static_cast<uint64_t>(now.tv_nsec);
}

// Scales `frames` frames in place by `gain`, advancing its ramp; unity
// gain leaves them untouched (bit-exact).
void apply_gain(float* frames, uint32_t count, unsigned channels, GainRamp& gain) noexcept {
    const size_t samples = size_t{count} * channels;
    if (gain.ramping()) {
        const uint32_t ramp = std::min(count, gain.frames_left());
        mix::scale_ramp(frames, ramp, channels, gain.current(), gain.step());
        gain.advance(ramp);
        mix::scale(frames + size_t{ramp} * channels, samples - size_t{ramp} * channels,
                   gain.current());
    } else if (gain.current() != 1.0f) {
        mix::scale(frames, samples, gain.current());
    }
}

// Mixes `frames` frames of a stream's ring starting at ring frame `offset`
// (no wrap inside) into `bus`, advancing the stream's gain ramp.
void mix_span(float* bus, const uint8_t* src, SampleFormat format, uint32_t frames,
              unsigned channels, GainRamp& gain) noexcept {
    const size_t samples = size_t{frames} * channels;
    uint32_t done = 0;
    if (gain.ramping()) {
        const uint32_t ramp = std::min(frames, gain.frames_left());
        if (format == SampleFormat::s16le) {
            mix::accumulate_s16_ramp(bus, reinterpret_cast<const int16_t*>(src), ramp, channels,
                                     gain.current(), gain.step());
        } else {
            mix::accumulate_f32_ramp(bus, reinterpret_cast<const float*>(src), ramp, channels,
                                     gain.current(), gain.step());
        }
        gain.advance(ramp);
        done = ramp;
    }
    if (done == frames) {
        return;
    }
    const size_t offset = size_t{done} * channels;
    if (format == SampleFormat::s16le) {
        mix::accumulate_s16(bus + offset, reinterpret_cast<const int16_t*>(src) + offset,
                            samples - offset, gain.current());
    } else {
        mix::accumulate_f32(bus + offset, reinterpret_cast<const float*>(src) + offset,
                            samples - offset, gain.current());
    }
}

} // namespace

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
    while (rc == 0 && !stop_requested_.load(std::memory_order_acquire)) {
        enter_module();
        rc = ops.wait(instance_);
        if (!back_from_module()) {
            return leave_abandoned();
        }
        if (rc != 0) {
            break;
        }
        {
            RtScope in_cycle;
            cycle_time_ns_ = monotonic_ns();
            apply_commands_rt();
            if (request_.kind == DeviceKind::source) {
                enter_module();
                rc = ops.read(instance_, output_.data(), request_.format.quantum);
                if (!back_from_module()) {
                    return leave_abandoned();
                }
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
                wake(event_fd_.get());
            }
        }
    }
    if (rc != 0) {
        // Release: the control thread that reads failed() may free this
        // device's streams at once (close_stream, flush), so everything
        // this thread did with them must be seen to come before.
        failed_.store(true, std::memory_order_release);
        post_rt({RtEvent::Kind::device_failed, nullptr, rc});
        wake(event_fd_.get());
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
            wake(stream->wake_fd.get()); // the room the client waits for is there
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
        pull_stream_rt(stream, sink_frame);
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
    apply_gain(bus_.data(), request_.format.quantum, request_.format.channels, device_gain_);
}

void Device::feed_recorders_rt(uint64_t sink_frame) noexcept {
    for (size_t i = 0; i < active_count_;) {
        Stream& stream = *active_[i];
        if (stream.record) {
            push_record_rt(stream, sink_frame);
            if (stream.rt.broken) {
                remove_rt(i);
                post_rt({RtEvent::Kind::broken, &stream, 0});
                continue;
            }
        }
        ++i;
    }
}

void Device::pull_stream_rt(Stream& stream, uint64_t sink_frame) noexcept {
    Stream::Rt& rt = stream.rt;
    RingHeader* header = stream.ring.header();
    const uint64_t capacity = stream.ring.capacity();
    const uint32_t quantum = request_.format.quantum;

    header->heartbeat.store(sink_frame / quantum, std::memory_order_relaxed);

    // The one read of the client's position this cycle. Unsigned arithmetic
    // turns a client_pos behind server_pos into a huge value, so one comparison
    // checks both bounds.
    const uint64_t client_pos = header->client_pos.load(std::memory_order_acquire);
    const uint64_t available = client_pos - rt.server_pos;
    if (available > capacity) {
        rt.broken = true;
        return;
    }
    const uint32_t flags = header->client_flags.load(std::memory_order_acquire);
    const bool draining = (flags & kClientFlagDraining) != 0;
    if (rt.paused) {
        return;
    }
    if (!rt.started) {
        if ((flags & kClientFlagStarted) == 0 && available < capacity) {
            return; // still prebuffering
        }
        rt.started = true;
        stream.rt_status.store(RtStreamStatus::playing, std::memory_order_relaxed);
    }

    // `frames` ring frames consumed, `produced` sink frames mixed.
    uint32_t frames = 0;
    uint32_t produced = 0;
    if (stream.conversion.direct) {
        frames = static_cast<uint32_t>(std::min<uint64_t>(available, quantum));
        produced = frames;
        stream.ring.view().for_each_piece(
            rt.server_pos, frames, [&](const uint8_t* at, uint64_t count, uint64_t done) {
                mix_span(bus_.data() + done * stream.channels, at, stream.format,
                         static_cast<uint32_t>(count), stream.channels, rt.gain);
            });
    } else {
        convert_stream_rt(stream, available, &frames, &produced);
    }
    if (produced > 0 && header->sink_start_frame.load(std::memory_order_relaxed) == kNoFrame) {
        header->sink_start_frame.store(sink_frame, std::memory_order_release);
    }
    if (produced < quantum) {
        // Time passes for the gain ramp whether or not there was audio.
        rt.gain.advance(quantum - produced);
        if (!draining) {
            header->xruns.store(stream.xruns.fetch_add(1, std::memory_order_relaxed) + 1,
                                std::memory_order_relaxed);
            // Consecutive short cycles: the control thread calls the stream
            // stalled once they add up to its stall timeout.
            stream.starved_cycles.fetch_add(1, std::memory_order_relaxed);
        }
    } else {
        stream.starved_cycles.store(0, std::memory_order_relaxed);
    }
    stream.rt_status.store(
        draining ? (frames == available ? RtStreamStatus::drained : RtStreamStatus::draining)
                 : RtStreamStatus::playing,
        std::memory_order_relaxed);

    const uint64_t free_before = capacity - available;
    rt.server_pos += frames;
    if (frames > 0) {
        header->cycle_time_ns.store(cycle_time_ns_, std::memory_order_relaxed);
        header->cycle_period_ns.store(cycle_period_ns_, std::memory_order_relaxed);
    }
    header->server_pos.store(rt.server_pos, std::memory_order_release);
    stream.consumed.store(rt.server_pos, std::memory_order_relaxed);

    // Wake the client only when its free space crosses its threshold, when
    // what is queued falls below two cycles' worth (a client woken later
    // than that has less than a cycle to refill in: with a 3 ms ring at
    // 1.33 ms cycles, its half-ring threshold woke it with 16 frames left),
    // or when the ring has just run empty (drain waits for that). A
    // self-timed writer wakes itself for its threshold and low queue alike,
    // timed from the published cycles: it is signalled only when less than
    // one cycle's worth is left (its own wake-up came late) or none.
    const bool self_timed = (flags & kClientFlagSelfTimed) != 0;
    const uint64_t threshold =
        std::clamp<uint64_t>(header->wake_threshold.load(std::memory_order_relaxed), 1, capacity);
    const uint64_t free_after = free_before + frames;
    const uint64_t low = self_timed ? uint64_t{frames} : 2 * uint64_t{frames};
    if ((!self_timed && free_before < threshold && free_after >= threshold) ||
        (frames > 0 && available >= low && available - frames < low) ||
        (frames > 0 && frames == available)) {
        wake(stream.wake_fd.get());
    }
}

// A stream that needs converting: decode (format and channel count) into
// decoded_, resample into resampled_ if the rates differ, then mix.
void Device::convert_stream_rt(Stream& stream, uint64_t available, uint32_t* consumed,
                               uint32_t* produced) noexcept {
    const Stream::Conversion& conversion = stream.conversion;
    const uint32_t quantum = request_.format.quantum;
    const uint32_t channels = request_.format.channels;
    Resampler* resampler = conversion.resampler.get();
    // A little more than the resampler needs: it takes what it uses.
    const uint32_t wanted = resampler != nullptr
                                ? std::min(resampler->input_for(quantum) + 2, max_input_frames_)
                                : quantum;
    const auto take = static_cast<uint32_t>(std::min<uint64_t>(available, wanted));
    stream.ring.view().for_each_piece(
        stream.rt.server_pos, take, [&](const uint8_t* at, uint64_t count, uint64_t done) {
            mix::decode_frames(stream.format, at, static_cast<uint32_t>(count), conversion.mix,
                               decoded_.data() + done * channels);
        });
    const float* mixed = decoded_.data();
    uint32_t in_frames = take;
    uint32_t out_frames = take;
    if (resampler != nullptr) {
        out_frames = quantum;
        resampler->process(decoded_.data(), &in_frames, resampled_.data(), &out_frames);
        mixed = resampled_.data();
    }
    if (out_frames > 0) {
        mix_span(bus_.data(), reinterpret_cast<const uint8_t*>(mixed), SampleFormat::f32le,
                 out_frames, channels, stream.rt.gain);
    }
    *consumed = in_frames;
    *produced = out_frames;
}

// A record stream: this cycle's bus, as played, converted to the stream's
// channels, rate and format, into its ring. A client that has left no room
// loses what does not fit (an overrun, counted) and nobody else notices.
void Device::push_record_rt(Stream& stream, uint64_t sink_frame) noexcept {
    Stream::Rt& rt = stream.rt;
    RingHeader* header = stream.ring.header();
    const uint64_t capacity = stream.ring.capacity();
    const DeviceFormat& fmt = request_.format;
    header->heartbeat.store(sink_frame / fmt.quantum, std::memory_order_relaxed);

    // For a record stream rt.server_pos is how far the server has written;
    // the client's read position is hostile like any client position.
    const uint64_t client_pos = header->client_pos.load(std::memory_order_acquire);
    const uint64_t used = rt.server_pos - client_pos;
    if (used > capacity) {
        rt.broken = true;
        return;
    }
    if (rt.paused) {
        return;
    }
    if (!rt.started) {
        rt.started = true;
        stream.rt_status.store(RtStreamStatus::playing, std::memory_order_relaxed);
    }

    const Stream::Conversion& conversion = stream.conversion;
    const uint32_t channels = stream.channels;
    // The bus as played, remixed and resampled where the stream differs.
    // `own` is set once the frames are in a buffer of this stream's (the
    // bus is shared with the other recorders, and the gain works in place).
    const float* frames = bus_.data();
    float* own = nullptr;
    uint32_t count = fmt.quantum;
    if (!conversion.mix.identity) {
        own = decoded_.data();
        mix::remix(bus_.data(), fmt.quantum, conversion.mix, own);
        frames = own;
    }
    if (conversion.resampler != nullptr) {
        uint32_t in_frames = fmt.quantum;
        uint32_t out_frames = max_input_frames_;
        own = resampled_for_record_.data();
        conversion.resampler->process(frames, &in_frames, own, &out_frames);
        frames = own;
        count = out_frames;
    }
    const size_t samples = size_t{count} * channels;
    if (rt.gain.ramping() || rt.gain.current() != 1.0f) {
        if (own == nullptr) {
            own = decoded_.data();
            std::memcpy(own, frames, samples * sizeof(float));
            frames = own;
        }
        apply_gain(own, count, channels, rt.gain);
    }
    mix::encode_samples(stream.format, frames, samples, record_bytes_.data());

    const uint64_t room = capacity - used;
    const auto n = static_cast<uint32_t>(std::min<uint64_t>(count, room));
    if (n < count) {
        header->xruns.store(stream.xruns.fetch_add(1, std::memory_order_relaxed) + 1,
                            std::memory_order_relaxed);
    }
    stream.ring.view().copy_in(rt.server_pos, record_bytes_.data(), n);
    if (n > 0 && header->sink_start_frame.load(std::memory_order_relaxed) == kNoFrame) {
        header->sink_start_frame.store(sink_frame, std::memory_order_release);
    }
    rt.server_pos += n;
    header->server_pos.store(rt.server_pos, std::memory_order_release);
    stream.consumed.store(rt.server_pos, std::memory_order_relaxed);

    // Wake the reader when what is ready crosses its threshold.
    const uint64_t threshold =
        std::clamp<uint64_t>(header->wake_threshold.load(std::memory_order_relaxed), 1, capacity);
    if (used < threshold && used + n >= threshold) {
        wake(stream.wake_fd.get());
    }
}

} // namespace audiod
