#include "pulse/playback_stream.h"

#include "pulse/channel_order.h"

#include "pulse/sample_spec.h"

#include <algorithm>
#include <array>

namespace audiod::pulse {

namespace {

// Where a seek lands: `from` + `offset`, the client's offset being any
// 64-bit number, kept within [0, 2^62] so that no index arithmetic after it
// overflows (a stream would take 30 000 years at 192 kHz x 8 x 4 bytes to
// reach that).
int64_t seek_target(int64_t from, int64_t offset) noexcept {
    constexpr int64_t kMost = int64_t{1} << 62;
    int64_t target = 0;
    if (__builtin_add_overflow(from, offset, &target)) {
        return offset < 0 ? 0 : kMost;
    }
    return std::clamp<int64_t>(target, 0, kMost);
}

} // namespace

std::string PlaybackStream::bind(Made made) {
    frame_bytes_ = frame_bytes(spec_);
    order_ = standard_order_of(map_);
    if (std::string why = map_ring(ring_, made, frame_bytes_); !why.empty()) {
        return why;
    }
    stream_id_ = made.stream_id;
    wake_fd_ = std::move(made.wake_fd);
    sink_ = std::move(made.device);
    sink_index_ = made.device_index;
    sink_latency_usec_ = made.device_latency_usec;
    set_wake_threshold();
    maybe_start();
    return "";
}

uint64_t PlaybackStream::request_batch() const noexcept {
    const uint64_t minreq = attributes_.minreq;
    const uint64_t eighth = attributes_.tlength / 8 / frame_bytes_ * frame_bytes_;
    if (early_requests_ || eighth <= minreq) {
        return minreq;
    }
    // What is left queued when a batch is asked for still covers the
    // sink's latency and two minreqs, as the buffer rules make tlength do.
    const uint64_t needed =
        usec_to_bytes(sink_latency_usec_, frame_bytes_, spec_.rate) + 2 * minreq;
    return attributes_.tlength - eighth >= needed ? eighth : minreq;
}

void PlaybackStream::set_wake_threshold() noexcept {
    // Woken once tlength - batch or less is queued: a batch is missing.
    const uint64_t capacity = ring_.capacity();
    const uint64_t keep = (attributes_.tlength - request_batch()) / frame_bytes_;
    const uint64_t threshold = std::max<uint64_t>(1, capacity - std::min(capacity, keep));
    ring_.header()->wake_threshold.store(static_cast<uint32_t>(threshold),
                                         std::memory_order_relaxed);
}

uint64_t PlaybackStream::queued_frames() const noexcept {
    return ring_.bound() ? ring_.queued(client_pos_) : 0;
}

uint64_t PlaybackStream::server_pos() const noexcept {
    return client_pos_ - queued_frames();
}

uint64_t PlaybackStream::dry_bytes(Clock::time_point now) const noexcept {
    uint64_t bytes = silence_bytes_;
    if (dry_since_ && now > *dry_since_) {
        const auto elapsed =
            std::chrono::duration_cast<std::chrono::microseconds>(now - *dry_since_).count();
        bytes += static_cast<uint64_t>(elapsed) * spec_.rate / 1000000 * frame_bytes_;
    }
    return bytes;
}

void PlaybackStream::end_dry_spell(Clock::time_point now) noexcept {
    base_ += dry_bytes(now);
    silence_bytes_ = 0;
    dry_since_.reset();
}

void PlaybackStream::set_corked(bool corked) {
    if (corked == corked_) {
        return;
    }
    const auto now = Clock::now();
    if (corked && dry_since_) {
        silence_bytes_ = dry_bytes(now); // no time goes by while corked
        dry_since_.reset();
    }
    corked_ = corked;
    if (!corked && dry_ && keeps_time()) {
        dry_since_ = now;
    }
}

bool PlaybackStream::write(std::span<const uint8_t> bytes, int64_t offset, SeekMode mode) {
    if (!ring_.bound()) {
        return false;
    }
    outstanding_ -= std::min<uint64_t>(outstanding_, bytes.size());
    int64_t here = write_index();
    int64_t target = here;
    switch (mode) {
    case SeekMode::relative:
    case SeekMode::relative_end:
        target = seek_target(here, offset);
        break;
    case SeekMode::absolute:
        target = seek_target(0, offset);
        break;
    case SeekMode::relative_on_read:
        target = seek_target(read_index(), offset);
        break;
    }
    const auto now = Clock::now();
    if (const uint64_t gone = dry_bytes(now); gone > 0) {
        // What is written for the time that went by dry is dropped; the
        // rest plays from where the sink is.
        const int64_t read = read_index();
        if (target < read) {
            const auto late = static_cast<size_t>(
                std::min<int64_t>(read - target, static_cast<int64_t>(bytes.size())));
            bytes = bytes.subspan(late);
            target += static_cast<int64_t>(late);
        }
        if (target < read) {
            return true; // all of it was late
        }
        end_dry_spell(now);
        partial_.clear();
        here = write_index();
    }
    dry_ = false;
    const uint64_t capacity = ring_.capacity();
    bool fitted = true;
    if (target != here) {
        // A seek: forward leaves silence, back rewrites what is not yet
        // taken (what is taken cannot be rewritten).
        partial_.clear();
        const uint64_t taken = server_pos();
        const int64_t in_ring = std::max<int64_t>(target - static_cast<int64_t>(base_), 0);
        const uint64_t to =
            std::max<uint64_t>(static_cast<uint64_t>(in_ring) / frame_bytes_, taken);
        if (to < client_pos_) {
            client_pos_ = to;
            ring_.write(client_pos_, nullptr, 0);
        } else {
            const uint8_t fill =
                audiod_format(spec_.format) == audiod::SampleFormat::u8 ? 0x80 : 0x00;
            std::array<uint8_t, 4096> silence{};
            silence.fill(fill);
            const uint64_t chunk = silence.size() / frame_bytes_;
            uint64_t gap = to - client_pos_;
            if (gap > capacity - queued_frames()) {
                gap = capacity - queued_frames();
                fitted = false;
            }
            while (gap > 0) {
                const uint64_t n = std::min(gap, chunk);
                ring_.write(client_pos_, silence.data(), n);
                client_pos_ += n;
                gap -= n;
            }
        }
    }
    // Whole frames go to the ring; a frame's first bytes wait for the rest.
    size_t used = 0;
    if (!partial_.empty()) {
        used = std::min(bytes.size(), frame_bytes_ - partial_.size());
        partial_.insert(partial_.end(), bytes.begin(),
                        bytes.begin() + static_cast<ptrdiff_t>(used));
        if (partial_.size() == frame_bytes_) {
            if (queued_frames() < capacity) {
                put_frames(partial_.data(), 1);
            } else {
                fitted = false;
            }
            partial_.clear();
        }
    }
    const std::span<const uint8_t> rest = bytes.subspan(used);
    const uint64_t frames = rest.size() / frame_bytes_;
    const uint64_t room = capacity - queued_frames();
    const uint64_t written = std::min(frames, room);
    if (written > 0) {
        put_frames(rest.data(), written);
    }
    if (written < frames) {
        fitted = false;
    } else {
        const size_t tail = rest.size() - frames * frame_bytes_;
        partial_.assign(rest.end() - static_cast<ptrdiff_t>(tail), rest.end());
    }
    maybe_start();
    return fitted;
}

void PlaybackStream::put_frames(const uint8_t* frames, uint64_t count) {
    if (order_) {
        // In audiod's channel order (channel_order.h).
        reordered_.resize(count * frame_bytes_);
        reorder_frames({frames, reordered_.size()}, reordered_, *order_,
                       frame_bytes_ / spec_.channels);
        frames = reordered_.data();
    }
    ring_.write(client_pos_, frames, count);
    client_pos_ += count;
}

uint32_t PlaybackStream::take_request() {
    if (!ring_.bound()) {
        return 0;
    }
    const uint64_t queued = queued_frames() * frame_bytes_ + partial_.size();
    const uint64_t promised = queued + outstanding_;
    if (promised >= attributes_.tlength) {
        return 0;
    }
    const uint64_t missing = attributes_.tlength - promised;
    if (missing < request_batch()) {
        return 0;
    }
    outstanding_ += missing;
    return static_cast<uint32_t>(missing);
}

uint32_t PlaybackStream::take_first_request() {
    outstanding_ = attributes_.tlength;
    return attributes_.tlength;
}

void PlaybackStream::maybe_start() {
    if (started_ || !ring_.bound()) {
        return;
    }
    const uint64_t queued = queued_frames() * frame_bytes_;
    if (prebuffer_ && attributes_.prebuf > 0 && queued < attributes_.prebuf) {
        return;
    }
    prebuffer_ = false;
    started_ = true;
    heard_ = false;
    started_at_pos_ = server_pos();
    ring_.set_flags(kClientFlagStarted, kClientFlagDraining);
}

void PlaybackStream::trigger() {
    prebuffer_ = false;
    maybe_start();
}

void PlaybackStream::prebuffer() {
    // Takes effect once the queue is flushed or runs dry: the RT thread is
    // not stopped in the middle of what it plays.
    prebuffer_ = true;
}

uint64_t PlaybackStream::flush_position() {
    end_dry_spell(Clock::now());
    partial_.clear();
    started_ = false;
    prebuffer_ = true;
    dry_ = false;
    if (ring_.bound()) {
        ring_.set_flags(0, kClientFlagStarted | kClientFlagDraining);
    }
    for (Drain& pending : drains_) {
        pending.until_pos = 0; // nothing of it is left to hear
    }
    maybe_start();
    return client_pos_;
}

void PlaybackStream::drain(uint32_t tag) {
    drains_.push_back({tag, client_pos_, std::nullopt});
    prebuffer_ = false;
    maybe_start();
    if (ring_.bound()) {
        ring_.set_flags(kClientFlagStarted | kClientFlagDraining, 0);
    }
}

std::vector<uint32_t> PlaybackStream::drained(Clock::time_point now) {
    std::vector<uint32_t> due;
    const uint64_t taken = server_pos();
    for (Drain& pending : drains_) {
        if (!pending.heard_at && taken >= pending.until_pos) {
            // Taken by the sink; heard once through its latency.
            pending.heard_at = now + std::chrono::microseconds(sink_usec());
        }
    }
    std::erase_if(drains_, [&](const Drain& pending) {
        if (pending.heard_at && now >= *pending.heard_at) {
            due.push_back(pending.tag);
            return true;
        }
        return false;
    });
    return due;
}

std::optional<PlaybackStream::Clock::time_point> PlaybackStream::next_deadline() const noexcept {
    std::optional<Clock::time_point> next;
    for (const Drain& pending : drains_) {
        // Not yet taken: looked at again soon (the ring's wake-up may not
        // come, if more was written after the drain).
        const Clock::time_point at =
            pending.heard_at.value_or(Clock::now() + std::chrono::milliseconds(20));
        next = next ? std::min(*next, at) : at;
    }
    return next;
}

bool PlaybackStream::take_started() {
    if (!started_ || heard_ || server_pos() <= started_at_pos_) {
        return false;
    }
    heard_ = true;
    return true;
}

bool PlaybackStream::take_underflow() {
    if (!started_ || dry_ || !drains_.empty() || queued_frames() != 0 ||
        server_pos() <= started_at_pos_) {
        return false;
    }
    dry_ = true;
    underflow_pos_ = server_pos();
    if (keeps_time() && !corked_) {
        dry_since_ = Clock::now();
    }
    return true;
}

int64_t PlaybackStream::write_index() const noexcept {
    return static_cast<int64_t>(base_ + client_pos_ * frame_bytes_ + partial_.size());
}

int64_t PlaybackStream::read_index() const noexcept {
    return static_cast<int64_t>(base_ + server_pos() * frame_bytes_ + dry_bytes(Clock::now()));
}

uint64_t PlaybackStream::sink_usec() const noexcept {
    if (!ring_.bound() || spec_.rate == 0) {
        return 0;
    }
    const uint64_t frames = ring_.header()->sink_latency_frames.load(std::memory_order_relaxed);
    return frames * 1000000 / spec_.rate;
}

bool PlaybackStream::playing() const noexcept {
    return started_ && !corked_ && (queued_frames() > 0 || keeps_time());
}

uint64_t PlaybackStream::underrun_for() const noexcept {
    return dry_ ? (server_pos() - underflow_pos_) * frame_bytes_ : 0;
}

uint64_t PlaybackStream::playing_for() const noexcept {
    return started_ ? (server_pos() - started_at_pos_) * frame_bytes_ : 0;
}

} // namespace audiod::pulse
