#include "device/stream_transfer.h"

#include "device/rt_support.h"
#include "device/stream.h"
#include "dsp/convert_kernels.h"
#include "dsp/mix_kernels.h"
#include "os/memory_lock.h"

#include "audiod/audiod.h"

#include <algorithm>
#include <cmath>
#include <cstring>

namespace audiod {

namespace {

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

StreamTransfer::StreamTransfer(const DeviceFormat& format)
    : format_(format)
    // Resampling from the highest rate needs this many input frames a
    // cycle (plus the filter's rounding).
    , max_input_frames_(static_cast<uint32_t>(
          (uint64_t{format.quantum} * AUDIOD_MAX_RATE + format.rate - 1) / format.rate + 8)) {
    // Decoding may hold a playback stream's frames at the device's
    // channels, or a record stream's at up to kMaxChannels.
    decoded_.assign(size_t{max_input_frames_} * kMaxChannels, 0.0f);
    resampled_for_record_.assign(size_t{max_input_frames_} * kMaxChannels, 0.0f);
    record_bytes_.assign(size_t{max_input_frames_} * kMaxChannels * 4, 0);
    resampled_.assign(size_t{format.quantum} * format.channels, 0.0f);
    // What every cycle touches stays in RAM.
    lock_memory(decoded_.data(), decoded_.size() * sizeof(float));
    lock_memory(resampled_.data(), resampled_.size() * sizeof(float));
    lock_memory(resampled_for_record_.data(), resampled_for_record_.size() * sizeof(float));
    lock_memory(record_bytes_.data(), record_bytes_.size());
}

StreamTransfer::~StreamTransfer() {
    unlock_memory(decoded_.data(), decoded_.size() * sizeof(float));
    unlock_memory(resampled_.data(), resampled_.size() * sizeof(float));
    unlock_memory(resampled_for_record_.data(), resampled_for_record_.size() * sizeof(float));
    unlock_memory(record_bytes_.data(), record_bytes_.size());
}

void StreamTransfer::pull_rt(Stream& stream, float* bus, uint64_t sink_frame) noexcept {
    Stream::Rt& rt = stream.rt;
    RingHeader* header = stream.ring.header();
    const uint64_t capacity = stream.ring.capacity();
    const uint32_t quantum = format_.quantum;

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
                mix_span(bus + done * stream.channels, at, stream.format,
                         static_cast<uint32_t>(count), stream.channels, rt.gain);
            });
    } else {
        convert_rt(stream, available, bus, &frames, &produced);
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
    if (frames > 0 && stream.anchored.load(std::memory_order_relaxed)) {
        publish_anchor_rt(stream, rt.server_pos, frames, media_ns_);
    }
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
        wake_rt(stream.wake_fd.get());
    }
}

void StreamTransfer::publish_anchor_rt(Stream& stream, uint64_t position, uint32_t frames,
                                       int64_t heard_ns) noexcept {
    TimeAnchor& last = stream.rt.anchor;
    if (heard_ns == 0) {
        last = {};
        return;
    }
    TimeAnchor now{position, heard_ns, 0};
    // The pace over the last cycle, if this one follows on from it and the
    // pace is within 1 % of the nominal (not a cycle that came up short, a
    // stream that moved between devices, or a source's new sender).
    const double nominal = 1e9 / stream.rate;
    if (last.ns != 0 && position > last.position &&
        position - last.position == stream.rt.anchor_frames) {
        const double pace =
            static_cast<double>(heard_ns - last.ns) / static_cast<double>(position - last.position);
        if (std::fabs(pace / nominal - 1) < 0.01) {
            now.ns_per_frame = pace;
        }
    }
    last = now;
    stream.rt.anchor_frames = frames;
    stream.heard.publish(now);
}

// A stream that needs converting: decode (format and channel count) into
// decoded_, resample into resampled_ if the rates differ, then mix into
// `bus`.
void StreamTransfer::convert_rt(Stream& stream, uint64_t available, float* bus, uint32_t* consumed,
                                uint32_t* produced) noexcept {
    const Stream::Conversion& conversion = stream.conversion;
    const uint32_t quantum = format_.quantum;
    const uint32_t channels = format_.channels;
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
        mix_span(bus, reinterpret_cast<const uint8_t*>(mixed), SampleFormat::f32le, out_frames,
                 channels, stream.rt.gain);
    }
    *consumed = in_frames;
    *produced = out_frames;
}

// A record stream: this cycle's bus, as played, converted to the stream's
// channels, rate and format, into its ring. A client that has left no room
// loses what does not fit (an overrun, counted) and nobody else notices.
void StreamTransfer::push_rt(Stream& stream, const float* bus, uint64_t sink_frame) noexcept {
    Stream::Rt& rt = stream.rt;
    RingHeader* header = stream.ring.header();
    const uint64_t capacity = stream.ring.capacity();
    const DeviceFormat& fmt = format_;
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
    const float* frames = bus;
    float* own = nullptr;
    uint32_t count = fmt.quantum;
    if (!conversion.mix.identity) {
        own = decoded_.data();
        mix::remix(bus, fmt.quantum, conversion.mix, own);
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
        apply_gain_rt(own, count, channels, rt.gain);
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
    if (n > 0 && stream.anchored.load(std::memory_order_relaxed)) {
        // A source's records are heard when it says; a monitor's were
        // heard already, unless they are to be heard again later.
        const int64_t replayed_after = stream.replayed_after_ns.load(std::memory_order_relaxed);
        if (timed_records_) {
            publish_anchor_rt(stream, rt.server_pos, n, media_ns_);
        } else if (replayed_after > 0 && media_ns_ != 0) {
            publish_anchor_rt(stream, rt.server_pos, n, media_ns_ + replayed_after);
        }
    }
    rt.server_pos += n;
    header->server_pos.store(rt.server_pos, std::memory_order_release);
    stream.consumed.store(rt.server_pos, std::memory_order_relaxed);

    // Wake the reader when what is ready crosses its threshold.
    const uint64_t threshold =
        std::clamp<uint64_t>(header->wake_threshold.load(std::memory_order_relaxed), 1, capacity);
    if (used < threshold && used + n >= threshold) {
        wake_rt(stream.wake_fd.get());
    }
}

} // namespace audiod
