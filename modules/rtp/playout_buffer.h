// The receiver's playout buffer: decoded audio placed by its RTP timestamp,
// written by the network thread, read by the source's rt thread a target
// latency behind, at a rate the clock follower sets.
//
// Positions are the sender's frames since its session began (64-bit, from
// the extended RTP timestamp). The writer puts each packet's frames at their
// position — so reordered packets land where they belong — and publishes
// how far the audio is complete (`ready`). The reader interpolates at a
// fractional position (cubic Hermite: allocation-free, continuous for a
// ratio that changes every cycle) and outputs silence for what is not ready.
//
// A new session, or a jump the buffer cannot bridge, starts an epoch: the
// writer names the position its data starts at, and the reader, seeing the
// epoch change, moves to that position minus the target latency. Samples
// are relaxed atomics, so a reader and writer meeting in the same frame
// (only at such a jump) exchange stale audio, never undefined behaviour.
//
// Thread: the write side is one writer thread's; read_rt is the rt
// thread's; both only ever touch preallocated memory.
#pragma once

#include "common/clock_follower.h"

#include <atomic>
#include <cstdint>
#include <memory>

namespace audiod::rtp {

struct PlayoutStatus {
    bool active = false;  // an epoch has begun
    uint64_t starved = 0; // frames output as silence because not ready
    double fill = 0;      // the latency held, in frames (see ClockFollower::latency)
    double ratio = 1;     // consumption ratio (the sender's clock / ours)
};

class PlayoutBuffer {
public:
    // `capacity` frames (rounded up to a power of two) of `channels`;
    // `in_rate`/`out_rate`: the sender's and the source's rates; `latency`:
    // the target, in the sender's frames. Thread: control.
    PlayoutBuffer(uint32_t channels, uint32_t capacity, uint32_t in_rate, uint32_t out_rate,
                  uint32_t latency);

    [[nodiscard]] uint32_t channels() const noexcept { return channels_; }
    [[nodiscard]] uint64_t capacity() const noexcept { return mask_ + 1; }
    [[nodiscard]] uint32_t latency() const noexcept { return latency_; }

    // ---- writer ----
    // Data will start at `start`; the reader will be `latency` behind it.
    // `new_sender`: forget the old sender's clock.
    void start_epoch(int64_t start, bool new_sender) noexcept;
    // Where the reader is (the position it reads next), in this epoch; a
    // position below it is too late to write.
    [[nodiscard]] int64_t read_position() const noexcept;
    // Writes `count` interleaved frames at `position`. Frames outside
    // [read_position, read_position + capacity) are skipped.
    void write(int64_t position, const float* frames, uint32_t count) noexcept;
    // Silence over [position, position + count).
    void clear(int64_t position, uint32_t count) noexcept;
    // Everything below `until` is written.
    void publish(int64_t until) noexcept;
    [[nodiscard]] int64_t ready() const noexcept { return ready_.load(std::memory_order_relaxed); }
    // The sender's packets last this many frames (the clock follower aims
    // at the middle of the sawtooth they make).
    void set_packet_frames(uint32_t frames) noexcept {
        packet_frames_.store(frames, std::memory_order_relaxed);
    }

    // ---- reader ----
    // Fills `count` frames of `out_channels` (float, interleaved): mono is
    // copied to every channel, several channels to mono are averaged,
    // otherwise channels map in order and the rest are silent.
    void read_rt(float* out, uint32_t out_channels, uint32_t count) noexcept;
    [[nodiscard]] PlayoutStatus status() const noexcept;
    // Reads at `ratio` (the sender's pace against the nominal, from its
    // reports) rather than where the fill level steers; 0 goes back to the
    // fill. A timed source reads so: its pace then moves only when the
    // sender's does, never by the loop's glides, which the relay playing
    // it would have to follow. The fill is still kept near its target, by
    // a trim of at most kMaxTrimPpm once it strays past a band.
    // Thread: rt (the reader's own).
    void set_fixed_ratio_rt(double ratio) noexcept { fixed_ratio_ = ratio; }
    static constexpr double kMaxTrimPpm = 20;
    // The exact position the last read_rt's first frame was read at (NaN
    // when it read no epoch's audio): what a timed source says is heard
    // when. Thread: rt (the reader's own).
    [[nodiscard]] double read_start_rt() const noexcept { return read_start_; }

private:
    [[nodiscard]] float sample(int64_t position, uint32_t channel, int64_t start,
                               int64_t ready) const noexcept;

    uint32_t channels_;
    uint64_t mask_;
    double step_; // the sender's frames per output frame at ratio 1
    uint32_t latency_;
    std::unique_ptr<std::atomic<float>[]> samples_;

    // writer -> reader
    std::atomic<uint32_t> epoch_{0};
    std::atomic<int64_t> epoch_start_{0};
    std::atomic<bool> epoch_new_sender_{false};
    std::atomic<int64_t> ready_{0};
    std::atomic<uint32_t> packet_frames_{0};
    // reader -> writer
    std::atomic<int64_t> read_position_{0};

    // reader's own
    uint32_t seen_epoch_ = 0;
    uint32_t packet_seen_ = 0;
    bool aligned_ = false;
    double preroll_sum_ = 0;
    uint32_t preroll_count_ = 0;
    int64_t position_ = 0; // integer part
    double fraction_ = 0;
    double read_start_ = 0;
    double fixed_ratio_ = 0;
    uint32_t in_rate_;
    ClockFollower follower_;

    // reader -> anyone (status)
    std::atomic<uint64_t> starved_{0};
    std::atomic<double> fill_{0};
    std::atomic<double> ratio_{1};
};

} // namespace audiod::rtp
