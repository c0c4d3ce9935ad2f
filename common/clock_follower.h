// Follows a remote sender's clock from how full the playout buffer is: a
// PI controller (a second-order delay-locked loop) that turns the buffer's
// fill error into the rate at which the receiver consumes the sender's
// frames. A sender whose clock runs 0.1 % fast fills the buffer 0.1 % faster
// than a receiver at the nominal rate drains it; the loop settles at a
// consumption ratio of 1.001 and a fill level at the target, so the latency
// stays put for hours without dropping or inserting a frame.
//
// For its first kWarmUpSeconds the loop only watches: where the first
// packets place the reader is uncertain by about half a packet (more for a
// sender that bunches them), so the fill it settles at becomes the level
// the loop holds, if within half a packet (or kDeadBandMs) of the target
// plus half a packet.
//
// The fill level jumps by a packet at each arrival and by network jitter;
// the loop sees it through a one-second low-pass (which averages the
// packets' sawtooth to its middle, target + half a packet) and a dead band
// of kDeadBandMs around that, inside which it does not act at all: two
// clocks that agree play at exactly the nominal rate, with no pitch wander,
// and a drifting one is corrected once the fill leaves the band, by a loop
// tuned slow (critically damped, about 30 s) and never by more than
// kMaxCorrection. The ratio is the pitch: it moves by at most
// kMaxSlewPerSecond, so nothing the loop sees at once (a reset, a sink
// cycle held up, a burst of packets) steps it. A pitch step is heard, and
// measured, as distortion; a glide that slow is neither.
// Used by the RTP receiver's playout buffer and by a source played into a
// sink (server/engine/source_relay.h).
// Thread: rt (one owner); nothing allocates.
#pragma once

#include <cstdint>

namespace audiod {

class ClockFollower {
public:
    // The largest correction: 0.5 %, five times a 0.1 % clock error.
    static constexpr double kMaxCorrection = 0.005;
    // 500 ppm a second: a 1 kHz tone glides by at most 0.05 Hz in 100 ms,
    // while the loop's own pull on a 0.1 % error is slower than that.
    static constexpr double kMaxSlewPerSecond = 0.0005;
    static constexpr double kDeadBandMs = 2;
    static constexpr double kWarmUpSeconds = 2;

    // `rate`: the sender's nominal frames per second; `target`: the wanted
    // fill, in its frames.
    ClockFollower(uint32_t rate, double target) noexcept;
    // Packets of `frames` make the fill a sawtooth that high: aim at its
    // middle, so that the fill just before a packet arrives is the target.
    void set_packet(double frames) noexcept;
    // The fill is read to within `frames` only: two devices' cycles meet
    // in an order that scheduling decides, so the reading jumps between
    // two levels and its mean wanders between them. The dead band is at
    // least half of that, and the warm-up keeps a level settled up to that
    // far from the target.
    void set_uncertainty(double frames) noexcept;

    // After `elapsed` of the sender's frames were consumed, with the buffer
    // holding `fill` frames: returns the ratio to consume at next (1 = the
    // nominal rate).
    double update(double fill, double elapsed) noexcept;
    // A discontinuity (the sender restarted): the fill jumps; keep what was
    // learnt about the clock (the integral) unless `forget`.
    void reset(bool forget) noexcept;

    [[nodiscard]] double ratio() const noexcept { return ratio_; }
    // Where the loop wants the fill: the target plus half a packet.
    [[nodiscard]] double center() const noexcept { return center_; }
    // The filtered latency, in frames: the mean fill less half a packet.
    [[nodiscard]] double latency() const noexcept {
        return center_ + error_ - (nominal_center_ - target_);
    }

private:
    uint32_t rate_;
    double target_;
    double center_;
    double dead_band_;
    double error_ = 0;
    double integral_ = 0;
    double ratio_ = 1;
    bool primed_ = false;
    double watched_ = 0; // seconds since the reset
    double nominal_center_ = 0;
    double max_shift_ = 0; // how far the warm-up may move the centre
};

} // namespace audiod
