// The multi-room probe's measurement (support/sync_probe.h), on rooms made
// here whose truth is known: the same frames heard later, a room that
// dropped samples, one that played the probe at another rate.
#include "support/probe_coverage.h"
#include "support/sync_probe.h"

#include <boost/test/unit_test.hpp>

#include <cmath>

using namespace audiod::test;

namespace {

constexpr double kFrameNs = 1e9 / kProbeRate;

// A room that heard the probe from index `first` after `lead` silent
// frames, its frame x the probe's `first + x·ratio` (linear
// interpolation), its frame 0 playing at `t0` ns and each at the nominal
// rate. `dropped` frames of the probe are skipped at index `drop_at`.
RoomRecording room(const std::string& name, uint64_t seconds, double t0, double ratio = 1.0,
                   uint64_t first = 0, size_t lead = 4800, uint64_t drop_at = 0,
                   uint64_t dropped = 0) {
    RoomRecording r;
    r.name = name;
    r.frames.assign(lead * 2, 0.0f);
    const auto frames = static_cast<uint64_t>(static_cast<double>(seconds * kProbeRate) / ratio);
    for (uint64_t x = 0; x < frames; ++x) {
        double s = static_cast<double>(first) + static_cast<double>(x) * ratio;
        if (dropped > 0 && s >= static_cast<double>(drop_at)) {
            s += static_cast<double>(dropped);
        }
        const auto i = static_cast<uint64_t>(s);
        const double frac = s - static_cast<double>(i);
        const ProbeFrame p0 = probe_frame(i);
        const ProbeFrame p1 = probe_frame(i + 1);
        // Both channels interpolated, as a resampler would (which reads
        // nonsense between the ramp's top and bottom where it wraps).
        r.frames.push_back(static_cast<float>(p0.programme + frac * (p1.programme - p0.programme)));
        r.frames.push_back(static_cast<float>(p0.ramp + frac * (p1.ramp - p0.ramp)));
    }
    // A mark every 19 quanta of 256, as a file sink writes them.
    const uint64_t total = r.frames.size() / 2;
    for (uint64_t f = 0; f < total; f += 4864) {
        r.marks.push_back(
            {f, static_cast<int64_t>(std::llround(t0 + static_cast<double>(f) * kFrameNs))});
    }
    return r;
}

} // namespace

BOOST_AUTO_TEST_SUITE(sync_probe)

BOOST_AUTO_TEST_CASE(the_probe_carries_its_index_and_bursts) {
    BOOST_CHECK_EQUAL(probe_frame(0).ramp, -1.0f);
    BOOST_CHECK_EQUAL(probe_frame(32768).ramp, 0.0f);
    BOOST_CHECK_EQUAL(probe_frame(65536 + 5).ramp, probe_frame(5).ramp);
    BOOST_CHECK_NE(probe_frame(10).programme, 0.0f);
    BOOST_CHECK_EQUAL(probe_frame(kProbeBurstFrames).programme, 0.0f);
    BOOST_CHECK_NE(probe_frame(kProbeBurstEvery).programme, probe_frame(0).programme);
    const auto s16 = probe_s16(1000, 10);
    BOOST_REQUIRE_EQUAL(s16.size(), 20u);
    BOOST_CHECK_EQUAL(s16[1], 1000 - 32768);
}

BOOST_AUTO_TEST_CASE(play_times_are_read_and_nonsense_refused) {
    std::string error;
    const auto marks = parse_play_times("# frame ns\n0 100\n4800 200\n", &error);
    BOOST_REQUIRE(marks);
    BOOST_REQUIRE_EQUAL(marks->size(), 2u);
    BOOST_CHECK_EQUAL((*marks)[1].frame, 4800u);
    BOOST_CHECK_EQUAL((*marks)[1].ns, 200);
    BOOST_CHECK(!parse_play_times("0 100\n10 x\n", &error));
    BOOST_CHECK_NE(error.find("line 2"), std::string::npos);
    BOOST_CHECK(!parse_play_times("10 100\n0 200\n", &error));
}

BOOST_AUTO_TEST_CASE(two_rooms_hearing_the_same_frames_37_us_apart_are_37_us_apart) {
    const RoomRecording a = room("a", 4, 1e9);
    const RoomRecording b = room("b", 4, 1e9 + 37'000);
    const RoomTimeline ta = read_timeline(a, 480);
    const RoomTimeline tb = read_timeline(b, 480);
    BOOST_CHECK(ta.heard);
    BOOST_CHECK_LE(ta.first_heard_index, 8u); // frames at the ramp's wrap are left out
    BOOST_CHECK_EQUAL(ta.discontinuities, 0u);
    BOOST_CHECK_EQUAL(ta.frames_heard, 4u * kProbeRate);
    const PairStats ab = compare(ta, tb, 480, 1.0, 100);
    BOOST_CHECK_GT(ab.points, 250u);
    BOOST_CHECK_CLOSE(ab.mean_us, -37.0, 0.1);
    BOOST_CHECK_CLOSE(ab.max_us, 37.0, 0.1);
    BOOST_CHECK_EQUAL(ab.converged_s, 0.0);
    // The bursts say the same.
    const PairStats bursts = compare(read_bursts(a), read_bursts(b), kProbeBurstEvery, 0.0, 100);
    BOOST_CHECK_EQUAL(bursts.points, 8u);
    BOOST_CHECK_CLOSE(bursts.mean_us, -37.0, 0.1);
}

BOOST_AUTO_TEST_CASE(a_room_that_dropped_ten_samples_shows_a_step_and_falls_behind_by_them) {
    const RoomRecording a = room("a", 4, 1e9);
    const RoomRecording b = room("b", 4, 1e9, 1.0, 0, 4800, 150'000, 10);
    const RoomTimeline tb = read_timeline(b, 480);
    BOOST_CHECK_EQUAL(tb.discontinuities, 1u);
    const PairStats ab = compare(read_timeline(a, 480), tb, 480, 0.0, 100);
    // After the drop b plays each index 10 frames early.
    BOOST_CHECK_CLOSE(ab.max_us, 10 * kFrameNs / 1e3, 0.1);
    BOOST_CHECK_LT(ab.p50_us, 1.0);
}

BOOST_AUTO_TEST_CASE(a_room_that_joined_late_is_placed_by_its_bursts_and_ramp) {
    // Index 200000 is in the ramp's fourth period: the bursts tell which.
    const RoomRecording late = room("late", 3, 5e9, 1.0, 200'000);
    const RoomTimeline t = read_timeline(late, 480);
    BOOST_CHECK_EQUAL(t.first_heard_index, 200'000u);
    const RoomTimeline bursts = read_bursts(late);
    BOOST_CHECK_EQUAL(bursts.first_index, 9u * kProbeBurstEvery); // the first whole burst
    // A room that played index 200000 at 5 s, against one that played
    // index 0 at 1 s at the same pace: 200000 frames' time apart, less 4 s.
    const RoomRecording early = room("early", 8, 1e9);
    const PairStats d = compare(read_timeline(early, 480), t, 480, 0.0, 100);
    BOOST_CHECK_GT(d.points, 100u);
    BOOST_CHECK_CLOSE(d.mean_us, (200'000 * kFrameNs - 4e9) / 1e3, 0.01);
}

BOOST_AUTO_TEST_CASE(past_512_s_a_step_is_placed_where_the_room_left_off) {
    // The ramp and the bursts repeat together every 512 s: a room that
    // drops 10 samples half a second past that carries on from 512.5 s,
    // not from 0.5 s.
    constexpr uint64_t k510s = 510 * kProbeRate;
    constexpr uint64_t kDropAt = 512 * kProbeRate + kProbeRate / 2;
    const RoomRecording r = room("long", 4, 1e9, 1.0, k510s, 4800, kDropAt, 10);
    const RoomTimeline t = read_timeline(r, 480);
    BOOST_CHECK_EQUAL(t.first_heard_index, k510s);
    BOOST_CHECK_EQUAL(t.discontinuities, 1u);
    BOOST_REQUIRE_EQUAL(t.steps.size(), 1u);
    BOOST_CHECK_LE(
        std::llabs(static_cast<long long>(t.steps[0]) - static_cast<long long>(kDropAt + 10)), 2);
}

BOOST_AUTO_TEST_CASE(a_room_playing_100_ppm_fast_drifts_away_as_it_should) {
    const RoomRecording a = room("a", 6, 1e9);
    const RoomRecording fast = room("fast", 6, 1e9, 1.0001);
    const RoomTimeline ta = read_timeline(a, 480);
    const RoomTimeline tf = read_timeline(fast, 480);
    BOOST_CHECK_EQUAL(tf.discontinuities, 0u);
    // Index s: a at s frames, fast at s / 1.0001 frames: apart by s·1e-4
    // frames, 500 µs at 5 s.
    const PairStats ab = compare(ta, tf, 480, 0.0, 1000);
    BOOST_CHECK_CLOSE(ab.max_us, 6 * kProbeRate * (1 - 1 / 1.0001) * kFrameNs / 1e3, 2.0);
    BOOST_CHECK_CLOSE(ab.drift_ppm, 1e6 * (1 - 1 / 1.0001), 0.5);
    const PairStats bursts =
        compare(read_bursts(a), read_bursts(fast), kProbeBurstEvery, 0.0, 1000);
    BOOST_CHECK_CLOSE(bursts.drift_ppm, ab.drift_ppm, 2.0);
}

// A stream moved from one room to another after 3 s: together they hold
// each index once; moved late (the second room starts 4000 frames early)
// some twice; moved with a gap some never.
BOOST_AUTO_TEST_CASE(rooms_that_took_turns_are_counted_for_every_index_once) {
    const uint64_t total = 6 * kProbeRate;
    const RoomRecording before = room("before", 3, 1e9);
    const auto after = [](uint64_t first) { return room("after", 3, 4e9, 1.0, first); };
    const Coverage exact = count_coverage({before, after(3 * kProbeRate)}, total);
    BOOST_CHECK_GT(exact.checked, total - 200);
    BOOST_CHECK_EQUAL(exact.missing, 0u);
    BOOST_CHECK_EQUAL(exact.repeated, 0u);
    BOOST_CHECK_EQUAL(exact.outside, 0u);

    const Coverage overlapping = count_coverage({before, after(3 * kProbeRate - 4000)}, total);
    BOOST_CHECK_EQUAL(overlapping.repeated, 4000u);
    BOOST_CHECK_EQUAL(overlapping.first_repeated, static_cast<int64_t>(3 * kProbeRate - 4000));
    // ... and, 3 s long, it ends 4000 frames short of the probe's end.
    BOOST_CHECK_EQUAL(overlapping.missing, 4000u);
    BOOST_CHECK_EQUAL(overlapping.first_missing, static_cast<int64_t>(total - 4000));
    BOOST_CHECK_EQUAL(overlapping.outside, 0u);

    const Coverage gap = count_coverage({before, after(3 * kProbeRate + 6000)}, total);
    BOOST_CHECK_EQUAL(gap.missing, 6000u);
    BOOST_CHECK_EQUAL(gap.first_missing, static_cast<int64_t>(3 * kProbeRate));
    BOOST_CHECK_EQUAL(gap.repeated, 0u);
    BOOST_CHECK_EQUAL(gap.outside, 6000u); // it played on past the probe's end
}

BOOST_AUTO_TEST_CASE(a_stream_away_for_whole_ramp_periods_is_not_read_as_paused) {
    // desk plays the probe to 3 s, the stream goes to a group for exactly
    // three ramp periods (196608 frames: a move there and back under TSan
    // once took that) and comes back: desk's ramp after its silence reads
    // as if the stream had paused. Its bursts say it did not.
    const uint64_t before = 3 * kProbeRate;
    const uint64_t away = 3 * uint64_t{kRampPeriod};
    const uint64_t total = before + away + 3 * kProbeRate;
    const auto probe = [](RoomRecording& r, uint64_t first, uint64_t frames) {
        for (uint64_t i = first; i < first + frames; ++i) {
            const ProbeFrame p = probe_frame(i);
            r.frames.push_back(p.programme);
            r.frames.push_back(p.ramp);
        }
    };
    const auto marks = [](RoomRecording& r, double t0) {
        for (uint64_t f = 0; f < r.frames.size() / 2; f += 4864) {
            r.marks.push_back(
                {f, static_cast<int64_t>(std::llround(t0 + static_cast<double>(f) * kFrameNs))});
        }
    };
    RoomRecording desk;
    desk.name = "desk";
    probe(desk, 0, before);
    desk.frames.resize(desk.frames.size() + 2 * (away + 512), 0.0f); // away, silent
    probe(desk, before + away, total - before - away);
    marks(desk, 1e9);
    RoomRecording group;
    group.name = "group";
    group.frames.assign(2 * (before + 512), 0.0f);
    probe(group, before, away);
    marks(group, 1e9);

    RoomTimeline timeline;
    const std::vector<double> index = read_indices(desk, timeline);
    BOOST_CHECK_EQUAL(index[before + away + 512 + 100], double(before + away + 100));
    const Coverage coverage = count_coverage({desk, group}, total);
    BOOST_CHECK_GT(coverage.checked, total - 300); // the wraps' frames are not counted
    BOOST_CHECK_EQUAL(coverage.missing, 0u);
    BOOST_CHECK_EQUAL(coverage.repeated, 0u);
}

BOOST_AUTO_TEST_SUITE_END()
