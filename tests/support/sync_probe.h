// The multi-room probe and its measurement: how far apart several rooms
// hear the same sample.
//
// The probe is two channels at 48 kHz. Channel 2 is the source's sample
// index as a ramp: sample n holds (n mod 65536) − 32768 in 16 bits, so a
// lossless path (L16, L24, a file) carries each frame's index exactly and a
// resampled one carries it as a fraction; a lost or repeated sample is a
// step in it. Channel 1 is programme: a burst of seeded noise (20 ms)
// every half second, silence between, for a cross-check by correlation
// that a lossy codec (Opus) leaves intact where it does not leave a ramp.
//
// A room is measured from what it played (its file sink's WAV) and when
// it played it (the sink's play-times: frame → CLOCK_MONOTONIC_RAW ns).
// From those, each source index the room played has a true time; two
// rooms' times for the same indices differ by how far apart they are.
// Thread: any (pure functions and data).
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace audiod::test {

inline constexpr uint32_t kProbeRate = 48000;
inline constexpr uint32_t kProbeBurstEvery = 24000; // frames: half a second
inline constexpr uint32_t kProbeBurstFrames = 960;  // 20 ms
inline constexpr uint32_t kRampPeriod = 65536;

// The probe's frame n: {programme, ramp}, in [-1, 1).
struct ProbeFrame {
    float programme;
    float ramp;
};
[[nodiscard]] ProbeFrame probe_frame(uint64_t n);
// `frames` of it from frame `first`, interleaved stereo s16; without
// `ramp`, channel 2 is silent (for a lossy codec, whose joint stereo would
// spread the ramp into the bursts' silences).
[[nodiscard]] std::vector<int16_t> probe_s16(uint64_t first, uint64_t frames, bool ramp = true);

// When frames of a recording played: the play-times lines, "FRAME NS".
struct PlayMark {
    uint64_t frame;
    int64_t ns;
};
// Reads a play-times text; nullopt (and why, in *error) if it is not one.
[[nodiscard]] std::optional<std::vector<PlayMark>> parse_play_times(const std::string& text,
                                                                    std::string* error);

// One room's recording: stereo frames as floats, and its play marks.
struct RoomRecording {
    std::string name;
    std::vector<float> frames; // interleaved {programme, ramp}
    std::vector<PlayMark> marks;
    uint32_t rate = kProbeRate;
};

// What one room played, read from its ramp: for source indices on a grid,
// the true time each played (ns), and where the index stepped.
struct RoomTimeline {
    std::string name;
    // Source index of the grid's first point, and the time each point
    // played (NaN where it did not play or was not read clearly).
    uint64_t first_index = 0;
    std::vector<double> ns;
    uint64_t frames_heard = 0;    // frames carrying the probe (the ramp's reading only)
    uint64_t discontinuities = 0; // steps in the index: samples lost or played twice
    std::vector<uint64_t> steps;  // the source index each step came to
    uint64_t first_heard_index = 0;
    bool heard = false;
};

// The source index each frame of a room's recording carries, read from
// its ramp (NaN where it carries none: silence, the ramp's wrap, a fade's
// edge, a concealment); counts its frames heard and its steps in `timeline`.
[[nodiscard]] std::vector<double> read_indices(const RoomRecording& room, RoomTimeline& timeline);

// Reads a room's ramp onto a grid of one point every `grid` source frames.
[[nodiscard]] RoomTimeline read_timeline(const RoomRecording& room, uint32_t grid);

// The same from channel 1 alone: each noise burst found by correlation,
// on the grid of bursts (first_index is a multiple of kProbeBurstEvery).
[[nodiscard]] RoomTimeline read_bursts(const RoomRecording& room);

// One grid point both rooms played: a's time of it, from the first such
// point, and how much later a played it than b.
struct PairPoint {
    double t_s;
    double delta_us;
};

struct PairStats {
    std::string a, b;
    std::vector<PairPoint> series; // every common point, in order
    size_t points = 0;             // grid points both played, after the settle time
    double p50_us = 0;             // |Δ|, median
    double p999_us = 0;            // |Δ|, 99.9th percentile
    double max_us = 0;             // |Δ|, largest
    double mean_us = 0;            // Δ (a − b), signed mean
    double drift_ppm = 0;          // how fast Δ grows: b's pace against a's, least squares
    double converged_s = -1;       // from the first common point until |Δ| stayed within the bound
                                   // for a second; -1 if it never did
};

// How far apart two rooms played the same indices: over the points after
// `settle_s` seconds of common playing; convergence judged by `bound_us`.
[[nodiscard]] PairStats compare(const RoomTimeline& a, const RoomTimeline& b, uint32_t grid,
                                double settle_s, double bound_us);

} // namespace audiod::test
