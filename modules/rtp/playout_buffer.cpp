#include "playout_buffer.h"

#include "common/cubic_interpolation.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <limits>

namespace audiod::rtp {

PlayoutBuffer::PlayoutBuffer(uint32_t channels, uint32_t capacity, uint32_t in_rate,
                             uint32_t out_rate, uint32_t latency)
    : channels_(channels)
    , mask_(std::bit_ceil(uint64_t{capacity}) - 1)
    , step_(double(in_rate) / out_rate)
    , latency_(latency)
    , samples_(new std::atomic<float>[(mask_ + 1) * channels])
    , in_rate_(in_rate)
    , follower_(in_rate, latency) {
    for (uint64_t i = 0; i < (mask_ + 1) * channels; ++i) {
        samples_[i].store(0, std::memory_order_relaxed);
    }
}

void PlayoutBuffer::start_epoch(int64_t start, bool new_sender) noexcept {
    epoch_start_.store(start, std::memory_order_relaxed);
    epoch_new_sender_.store(new_sender, std::memory_order_relaxed);
    ready_.store(start, std::memory_order_relaxed);
    // Until the reader takes the epoch, writes are placed from `start` on.
    read_position_.store(start - latency_, std::memory_order_relaxed);
    epoch_.fetch_add(1, std::memory_order_release);
}

int64_t PlayoutBuffer::read_position() const noexcept {
    return read_position_.load(std::memory_order_acquire);
}

void PlayoutBuffer::write(int64_t position, const float* frames, uint32_t count) noexcept {
    const int64_t low = read_position();
    const auto high = low + static_cast<int64_t>(mask_ + 1);
    for (uint32_t f = 0; f < count; ++f) {
        const int64_t p = position + f;
        if (p < low || p >= high) {
            continue;
        }
        std::atomic<float>* slot = &samples_[(static_cast<uint64_t>(p) & mask_) * channels_];
        for (uint32_t c = 0; c < channels_; ++c) {
            slot[c].store(frames[size_t{f} * channels_ + c], std::memory_order_relaxed);
        }
    }
}

void PlayoutBuffer::clear(int64_t position, uint32_t count) noexcept {
    const int64_t low = read_position();
    const auto high = low + static_cast<int64_t>(mask_ + 1);
    for (uint32_t f = 0; f < count; ++f) {
        const int64_t p = position + f;
        if (p >= low && p < high) {
            std::atomic<float>* slot = &samples_[(static_cast<uint64_t>(p) & mask_) * channels_];
            for (uint32_t c = 0; c < channels_; ++c) {
                slot[c].store(0, std::memory_order_relaxed);
            }
        }
    }
}

void PlayoutBuffer::publish(int64_t until) noexcept {
    ready_.store(until, std::memory_order_release);
}

float PlayoutBuffer::sample(int64_t position, uint32_t channel, int64_t start,
                            int64_t ready) const noexcept {
    if (position < start || position >= ready) {
        return 0;
    }
    return samples_[(static_cast<uint64_t>(position) & mask_) * channels_ + channel].load(
        std::memory_order_relaxed);
}

void PlayoutBuffer::read_rt(float* out, uint32_t out_channels, uint32_t count) noexcept {
    const uint32_t epoch = epoch_.load(std::memory_order_acquire);
    if (epoch == 0) {
        for (uint32_t i = 0; i < count * out_channels; ++i) {
            out[i] = 0;
        }
        read_start_ = std::numeric_limits<double>::quiet_NaN();
        return;
    }
    const int64_t start = epoch_start_.load(std::memory_order_relaxed);
    if (epoch != seen_epoch_) {
        seen_epoch_ = epoch;
        position_ = start - latency_;
        fraction_ = 0;
        aligned_ = false;
        preroll_sum_ = 0;
        preroll_count_ = 0;
        follower_.reset(epoch_new_sender_.load(std::memory_order_relaxed));
    }
    if (const uint32_t packet = packet_frames_.load(std::memory_order_relaxed);
        packet != packet_seen_) {
        packet_seen_ = packet;
        follower_.set_packet(packet);
    }
    const int64_t ready = ready_.load(std::memory_order_acquire);
    if (!aligned_ && ready > start) {
        // Before the epoch's first frame plays (the reader starts `latency`
        // early, in silence) it may move freely: it samples the fill each
        // cycle, and just before the audio begins puts itself where the mean
        // fill is the loop's centre, so that the loop starts at rest however
        // the sender bunches its packets. It never skips past `start`.
        const double sample = double(ready - position_) - fraction_;
        preroll_sum_ += sample;
        ++preroll_count_;
        if (position_ + int64_t(step_ * count) + 2 >= start) {
            const double mean = preroll_sum_ / preroll_count_;
            position_ =
                std::min(position_ + static_cast<int64_t>(mean - follower_.center()), start);
            fraction_ = 0;
            aligned_ = true;
        }
    }
    // The fill before this read: sampled at the same phase every cycle, so
    // the reads' own sawtooth is not mistaken for drift.
    const double fill = double(ready - position_) - fraction_;
    const bool flowing = position_ + 2 < ready;
    // Only audio that flows says anything about the sender's clock: a
    // starved reader (a paused sender) would wind the loop up.
    double ratio = 0;
    if (fixed_ratio_ > 0) {
        // Past a band of a quarter of the latency (at least the loop's dead
        // band), the excess is trimmed away over ten seconds.
        const double band =
            std::max(latency_ / 4.0, ClockFollower::kDeadBandMs * in_rate_ / 1000.0);
        const double excess = fill - follower_.center();
        const double beyond = std::fabs(excess) > band ? excess - std::copysign(band, excess) : 0;
        const double trim =
            std::clamp(beyond / (10.0 * in_rate_), -kMaxTrimPpm * 1e-6, kMaxTrimPpm * 1e-6);
        ratio = aligned_ && flowing ? fixed_ratio_ + trim : fixed_ratio_;
    } else {
        if (position_ >= start && flowing) {
            follower_.update(fill, step_ * follower_.ratio() * count);
        }
        ratio = follower_.ratio();
    }
    const double step = step_ * ratio;
    read_start_ = static_cast<double>(position_) + fraction_;
    uint64_t starved = 0;
    const uint32_t in_channels = channels_;
    for (uint32_t f = 0; f < count; ++f) {
        const double t = fraction_;
        if (position_ + 2 >= ready && position_ >= start) {
            ++starved;
        }
        float frame[8];
        for (uint32_t c = 0; c < in_channels && c < 8; ++c) {
            const float y0 = sample(position_ - 1, c, start, ready);
            const float y1 = sample(position_, c, start, ready);
            const float y2 = sample(position_ + 1, c, start, ready);
            const float y3 = sample(position_ + 2, c, start, ready);
            frame[c] = catmull_rom(y0, y1, y2, y3, t);
        }
        float* o = out + size_t{f} * out_channels;
        if (in_channels == 1) {
            for (uint32_t c = 0; c < out_channels; ++c) {
                o[c] = frame[0];
            }
        } else if (out_channels == 1) {
            float sum = 0;
            for (uint32_t c = 0; c < in_channels; ++c) {
                sum += frame[c];
            }
            o[0] = sum / static_cast<float>(in_channels);
        } else {
            for (uint32_t c = 0; c < out_channels; ++c) {
                o[c] = c < in_channels ? frame[c] : 0.0f;
            }
        }
        fraction_ += step;
        const double whole = std::floor(fraction_);
        position_ += static_cast<int64_t>(whole);
        fraction_ -= whole;
    }
    read_position_.store(position_ - 1, std::memory_order_release); // y0 is still read
    fill_.store(follower_.latency(), std::memory_order_relaxed);
    ratio_.store(ratio, std::memory_order_relaxed);
    if (starved > 0) {
        starved_.fetch_add(starved, std::memory_order_relaxed);
    }
}

PlayoutStatus PlayoutBuffer::status() const noexcept {
    PlayoutStatus s;
    s.active = epoch_.load(std::memory_order_relaxed) != 0;
    s.starved = starved_.load(std::memory_order_relaxed);
    s.fill = fill_.load(std::memory_order_relaxed);
    s.ratio = ratio_.load(std::memory_order_relaxed);
    return s;
}

} // namespace audiod::rtp
