// The RT cycle of a real Device, driven one cycle at a time: what comes out of
// the device for known input, underruns, prebuffering, corrupt rings,
// wake-ups, gain ramps and pausing.
#include "unit/server/stepped_sink.h"

#include <boost/test/unit_test.hpp>

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <random>
#include <unistd.h>

using namespace audiod;
using namespace audiod::test;

namespace {

constexpr uint32_t kQuantum = 64;
constexpr uint32_t kChannels = 2;

std::vector<int16_t> random_s16(size_t samples, uint32_t seed) {
    std::mt19937 rng(seed);
    std::uniform_int_distribution<int> dist(-32768, 32767);
    std::vector<int16_t> v(samples);
    for (auto& s : v) {
        s = static_cast<int16_t>(dist(rng));
    }
    // Make sure the extremes are in there.
    v[0] = -32768;
    v[1] = 32767;
    return v;
}

uint64_t pending_wakeups(const Stream& stream) {
    uint64_t count = 0;
    return ::read(stream.wake_fd.get(), &count, sizeof count) == sizeof count ? count : 0;
}

} // namespace

BOOST_AUTO_TEST_SUITE(sink_cycle)

BOOST_AUTO_TEST_CASE(single_s16_stream_at_unity_is_bit_exact_across_wrap) {
    SinkRig rig;
    // Capacity not a multiple of the quantum, so reads straddle the wrap.
    Stream& s = rig.add_stream(SampleFormat::s16le, 1000);
    const auto input = random_s16(size_t{20} * kQuantum * kChannels, 1);
    const size_t frames = input.size() / kChannels;
    // Keep the ring topped up as a client would: fill it, then refill what
    // each cycle took.
    size_t written = 1000;
    rig.write(s, input.data(), written);
    rig.set_client_flags(s, kClientFlagStarted);
    while (written < frames) {
        rig.run_cycles(1);
        const size_t n = std::min<size_t>(kQuantum, frames - written);
        rig.write(s, input.data() + written * kChannels, n);
        written += n;
    }
    rig.set_client_flags(s, kClientFlagStarted | kClientFlagDraining);
    rig.run_cycles(1000 / kQuantum + 1);
    const auto out = rig.output<int16_t>();
    BOOST_REQUIRE_GE(out.size(), input.size());
    const uint64_t start = s.ring.header()->sink_start_frame.load();
    BOOST_REQUIRE_EQUAL(start, 0u);
    BOOST_CHECK(std::equal(input.begin(), input.end(), out.begin()));
    BOOST_CHECK_EQUAL(s.xruns.load(), 0u);
}

BOOST_AUTO_TEST_CASE(two_streams_sum_exactly_and_saturate) {
    SinkRig rig;
    Stream& a = rig.add_stream(SampleFormat::s16le, 4096);
    Stream& b = rig.add_stream(SampleFormat::s16le, 4096);
    const size_t samples = size_t{4} * kQuantum * kChannels;
    std::vector<int16_t> x(samples), y(samples);
    for (size_t i = 0; i < samples; ++i) {
        x[i] = static_cast<int16_t>((i * 37) % 20000 - 10000);
        y[i] = static_cast<int16_t>((i * 53) % 30000 - 15000);
    }
    x[0] = 30000; // 30000 + y[0] clips high
    y[0] = 20000;
    x[1] = -30000;
    y[1] = -20000; // clips low
    rig.write(a, x.data(), samples / kChannels);
    rig.write(b, y.data(), samples / kChannels);
    rig.set_client_flags(a, kClientFlagStarted);
    rig.set_client_flags(b, kClientFlagStarted);
    rig.run_cycles(4);
    const auto out = rig.output<int16_t>();
    for (size_t i = 0; i < samples; ++i) {
        const int expected = std::clamp(int{x[i]} + int{y[i]}, -32768, 32767);
        BOOST_REQUIRE_EQUAL(out[i], expected);
    }
}

BOOST_AUTO_TEST_CASE(float_streams_into_float_sink) {
    SinkRig rig({48000, kChannels, kQuantum}, "f32le");
    Stream& a = rig.add_stream(SampleFormat::f32le, 1024, 0.5f);
    std::vector<float> x(size_t{kQuantum} * kChannels);
    for (size_t i = 0; i < x.size(); ++i) {
        x[i] = std::sin(static_cast<float>(i) * 0.1f) * 1.5f; // includes overs
    }
    rig.write(a, x.data(), kQuantum);
    rig.set_client_flags(a, kClientFlagStarted);
    rig.run_cycles(1);
    const auto out = rig.output<float>();
    for (size_t i = 0; i < x.size(); ++i) {
        BOOST_REQUIRE_EQUAL(out[i], std::clamp(x[i] * 0.5f, -1.0f, 1.0f));
    }
}

BOOST_AUTO_TEST_CASE(hostile_floats_cannot_disturb_other_streams) {
    SinkRig rig;
    Stream& good = rig.add_stream(SampleFormat::s16le, 1024);
    Stream& evil = rig.add_stream(SampleFormat::f32le, 1024);
    std::vector<int16_t> steady(size_t{kQuantum} * kChannels, 1000);
    std::vector<float> poison(size_t{kQuantum} * kChannels);
    for (size_t i = 0; i < poison.size(); ++i) {
        const float values[] = {std::numeric_limits<float>::quiet_NaN(),
                                std::numeric_limits<float>::infinity(),
                                -std::numeric_limits<float>::infinity(),
                                -std::numeric_limits<float>::quiet_NaN(), 0.0f};
        poison[i] = values[i % 5];
    }
    rig.write(good, steady.data(), kQuantum);
    rig.write(evil, poison.data(), kQuantum);
    rig.set_client_flags(good, kClientFlagStarted);
    rig.set_client_flags(evil, kClientFlagStarted);
    rig.run_cycles(1);
    const auto out = rig.output<int16_t>();
    for (size_t i = 0; i < poison.size(); ++i) {
        // NaN is silence, so the good stream comes through untouched; an
        // infinity is a very loud stream, which clips the mix like any other.
        const int16_t expected = (i % 5 == 1) ? 32767 : (i % 5 == 2) ? -32768 : 1000;
        BOOST_REQUIRE_EQUAL(out[i], expected);
    }
}

BOOST_AUTO_TEST_CASE(short_stream_gets_silence_and_an_underrun_alone) {
    SinkRig rig;
    Stream& full = rig.add_stream(SampleFormat::s16le, 4096);
    Stream& starved = rig.add_stream(SampleFormat::s16le, 4096);
    std::vector<int16_t> ones(size_t{8} * kQuantum * kChannels, 100);
    std::vector<int16_t> few(size_t{10} * kChannels, 1000);
    rig.write(full, ones.data(), 8 * kQuantum);
    rig.write(starved, few.data(), 10);
    rig.set_client_flags(full, kClientFlagStarted);
    rig.set_client_flags(starved, kClientFlagStarted);
    rig.run_cycles(3);
    const auto out = rig.output<int16_t>();
    for (size_t f = 0; f < 3 * kQuantum; ++f) {
        const int16_t expected = f < 10 ? 1100 : 100;
        BOOST_REQUIRE_EQUAL(out[f * kChannels], expected);
    }
    BOOST_CHECK_EQUAL(starved.xruns.load(), 3u);
    BOOST_CHECK_EQUAL(starved.ring.header()->xruns.load(), 3u);
    BOOST_CHECK_EQUAL(full.xruns.load(), 0u);
}

BOOST_AUTO_TEST_CASE(draining_stream_runs_dry_without_underruns) {
    SinkRig rig;
    Stream& s = rig.add_stream(SampleFormat::s16le, 4096);
    std::vector<int16_t> few(size_t{10} * kChannels, 5);
    rig.write(s, few.data(), 10);
    rig.set_client_flags(s, kClientFlagStarted | kClientFlagDraining);
    rig.run_cycles(3);
    BOOST_CHECK_EQUAL(s.xruns.load(), 0u);
    BOOST_CHECK(s.rt_status.load() == RtStreamStatus::drained);
    BOOST_CHECK_EQUAL(s.ring.header()->server_pos.load(), 10u);
}

BOOST_AUTO_TEST_CASE(prebuffering_until_started_or_full) {
    SinkRig rig;
    Stream& s = rig.add_stream(SampleFormat::s16le, 256);
    std::vector<int16_t> data(size_t{256} * kChannels, 7);
    rig.write(s, data.data(), 100);
    rig.run_cycles(2);
    BOOST_CHECK_EQUAL(s.ring.header()->server_pos.load(), 0u);
    BOOST_CHECK_EQUAL(s.xruns.load(), 0u);
    BOOST_CHECK(s.rt_status.load() == RtStreamStatus::prebuffering);
    // A full ring starts on its own, even without the flag.
    rig.write(s, data.data(), 156);
    rig.run_cycles(1);
    BOOST_CHECK_EQUAL(s.ring.header()->server_pos.load(), kQuantum);
    const uint64_t start = s.ring.header()->sink_start_frame.load();
    BOOST_CHECK_EQUAL(start, 2u * kQuantum);
}

// A flush drops the frames before its position and keeps those after it,
// then waits for a start again; a position the client never wrote to (or
// one already played) drops nothing.
BOOST_AUTO_TEST_CASE(a_flush_drops_frames_before_its_position_and_waits_for_a_start) {
    SinkRig rig;
    Stream& s = rig.add_stream(SampleFormat::s16le, 4096);
    std::vector<int16_t> old_frames(size_t{4} * kQuantum * kChannels, 11);
    std::vector<int16_t> new_frames(size_t{2} * kQuantum * kChannels, 22);
    rig.write(s, old_frames.data(), 4 * kQuantum);
    rig.set_client_flags(s, kClientFlagStarted);
    rig.run_cycles(1); // one quantum of the old frames played
    rig.set_client_flags(s, 0);
    rig.send({RtCommand::Kind::flush, &s, 1.0f, 9 * kQuantum}); // never written: ignored
    rig.run_cycles(1);
    BOOST_CHECK_EQUAL(s.ring.header()->server_pos.load(), kQuantum);
    BOOST_CHECK(s.rt_status.load() == RtStreamStatus::prebuffering);
    rig.send({RtCommand::Kind::flush, &s, 1.0f, 4 * kQuantum});
    rig.write(s, new_frames.data(), 2 * kQuantum);
    rig.run_cycles(2); // the flush applies; the stream waits for its start
    BOOST_CHECK_EQUAL(s.ring.header()->server_pos.load(), 4u * kQuantum);
    BOOST_CHECK_EQUAL(s.consumed.load(), 4u * kQuantum);
    BOOST_CHECK_EQUAL(s.xruns.load(), 0u);
    rig.send({RtCommand::Kind::flush, &s, 1.0f, 2 * kQuantum}); // behind: ignored
    rig.set_client_flags(s, kClientFlagStarted);
    rig.run_cycles(2);
    const auto out = rig.output<int16_t>();
    BOOST_REQUIRE_GE(out.size(), size_t{6} * kQuantum * kChannels);
    for (size_t f = 0; f < 6 * kQuantum; ++f) {
        const int16_t expected = f < kQuantum ? 11 : (f < 4 * kQuantum ? 0 : 22);
        BOOST_REQUIRE_MESSAGE(out[f * kChannels] == expected,
                              "frame " << f << ": " << out[f * kChannels]);
    }
    BOOST_CHECK_EQUAL(s.ring.header()->server_pos.load(), 6u * kQuantum);
}

BOOST_AUTO_TEST_CASE(corrupt_positions_drop_only_that_stream) {
    SinkRig rig;
    Stream& good = rig.add_stream(SampleFormat::s16le, 4096);
    Stream& evil = rig.add_stream(SampleFormat::s16le, 512);
    std::vector<int16_t> ones(size_t{8} * kQuantum * kChannels, 300);
    rig.write(good, ones.data(), 8 * kQuantum);
    rig.set_client_flags(good, kClientFlagStarted);
    rig.set_client_flags(evil, kClientFlagStarted);
    // Claim more frames than the ring can hold.
    evil.ring.header()->client_pos.store(512 + 1);
    rig.run_cycles(2);
    auto events = rig.events(1);
    BOOST_REQUIRE_EQUAL(events.size(), 1u);
    BOOST_CHECK(events[0].kind == RtEvent::Kind::broken);
    BOOST_CHECK_EQUAL(events[0].stream, &evil);
    // The good stream played on, untouched.
    const auto out = rig.output<int16_t>();
    for (size_t i = 0; i < size_t{2} * kQuantum * kChannels; ++i) {
        BOOST_REQUIRE_EQUAL(out[i], 300);
    }
    BOOST_CHECK_EQUAL(good.xruns.load(), 0u);

    // The second corruption: client_pos behind server_pos.
    Stream& evil2 = rig.add_stream(SampleFormat::s16le, 512);
    rig.write(evil2, ones.data(), 100);
    rig.set_client_flags(evil2, kClientFlagStarted);
    rig.run_cycles(1);
    evil2.ring.header()->client_pos.store(10); // server_pos is 64 now
    rig.run_cycles(1);
    events = rig.events(1);
    BOOST_REQUIRE_EQUAL(events.size(), 1u);
    BOOST_CHECK(events[0].kind == RtEvent::Kind::broken);
    BOOST_CHECK_EQUAL(events[0].stream, &evil2);
}

BOOST_AUTO_TEST_CASE(detach_hands_the_stream_back) {
    SinkRig rig;
    Stream& s = rig.add_stream(SampleFormat::s16le, 512);
    rig.run_cycles(1);
    rig.send({RtCommand::Kind::detach, &s, 1.0f});
    rig.run_cycles(1);
    const auto events = rig.events(1);
    BOOST_REQUIRE_EQUAL(events.size(), 1u);
    BOOST_CHECK(events[0].kind == RtEvent::Kind::detached);
    BOOST_CHECK_EQUAL(events[0].stream, &s);
    // Frames written after the detach are not consumed.
    std::vector<int16_t> data(size_t{kQuantum} * kChannels, 9);
    rig.write(s, data.data(), kQuantum);
    rig.set_client_flags(s, kClientFlagStarted);
    rig.run_cycles(1);
    BOOST_CHECK_EQUAL(s.ring.header()->server_pos.load(), 0u);
}

BOOST_AUTO_TEST_CASE(wakeups_when_free_space_crosses_threshold_or_the_queue_runs_low) {
    SinkRig rig;
    Stream& s = rig.add_stream(SampleFormat::s16le, 1024);
    s.ring.header()->wake_threshold.store(512);
    std::vector<int16_t> data(size_t{1024} * kChannels, 1);
    rig.write(s, data.data(), 1024); // full: free 0
    rig.run_cycles(7);               // free 448: below the threshold
    BOOST_CHECK_EQUAL(pending_wakeups(s), 0u);
    rig.run_cycles(1); // free 512: crossed
    BOOST_CHECK_EQUAL(pending_wakeups(s), 1u);
    rig.run_cycles(6); // more free space, no new crossing; 128 frames (two cycles) left
    BOOST_CHECK_EQUAL(pending_wakeups(s), 0u);
    rig.run_cycles(1); // under two cycles' worth left: the writer is woken again
    BOOST_CHECK_EQUAL(pending_wakeups(s), 1u);
    rig.run_cycles(1); // ran empty: one wake-up for drain
    BOOST_CHECK_EQUAL(pending_wakeups(s), 1u);
    rig.run_cycles(2); // stays empty: nothing more
    BOOST_CHECK_EQUAL(pending_wakeups(s), 0u);
}

// A ring of 2.25 quanta (a player's 3 ms at a 64-frame quantum) with the
// library's default threshold, half the ring, kept full by its writer: the
// threshold alone would wake it every other cycle with 16 frames left, less
// than the next cycle takes; it is woken every cycle, with a cycle to spare.
BOOST_AUTO_TEST_CASE(a_writer_of_a_small_ring_is_woken_every_cycle_with_a_cycle_to_spare) {
    SinkRig rig;
    Stream& s = rig.add_stream(SampleFormat::s16le, 144);
    s.ring.header()->wake_threshold.store(72);
    std::vector<int16_t> data(size_t{144} * kChannels, 1);
    rig.write(s, data.data(), 144);
    rig.set_client_flags(s, kClientFlagStarted);
    for (int cycle = 0; cycle < 20; ++cycle) {
        rig.run_cycles(1);
        BOOST_CHECK_EQUAL(pending_wakeups(s), 1u);
        const uint64_t queued =
            s.ring.header()->client_pos.load() - s.ring.header()->server_pos.load();
        BOOST_CHECK_EQUAL(queued, 144u - kQuantum); // more than the next cycle takes
        rig.write(s, data.data(), kQuantum);
    }
    BOOST_CHECK_EQUAL(s.xruns.load(), 0u);
}

// The same ring with a self-timed writer, and a threshold it crosses every
// cycle: each cycle that takes from the ring publishes when it began and
// the sink's period, and the server signals the writer only when its own
// wake-up came late, i.e. less than a cycle's worth is left.
BOOST_AUTO_TEST_CASE(a_self_timed_writer_is_signalled_only_when_less_than_a_cycle_is_left) {
    SinkRig rig;
    Stream& s = rig.add_stream(SampleFormat::s16le, 144);
    RingHeader* header = s.ring.header();
    header->wake_threshold.store(kQuantum);
    std::vector<int16_t> data(size_t{144} * kChannels, 1);
    rig.write(s, data.data(), 100);
    rig.run_cycles(1); // prebuffering: no frame taken, no cycle published
    BOOST_CHECK_EQUAL(header->cycle_time_ns.load(), 0u);
    rig.write(s, data.data(), 44);
    rig.set_client_flags(s, kClientFlagStarted | kClientFlagSelfTimed);
    uint64_t last_cycle = 0;
    for (int cycle = 0; cycle < 20; ++cycle) {
        rig.run_cycles(1);
        BOOST_CHECK_EQUAL(pending_wakeups(s), 0u);
        BOOST_CHECK_GT(header->cycle_time_ns.load(), last_cycle);
        last_cycle = header->cycle_time_ns.load();
        rig.write(s, data.data(), kQuantum);
    }
    BOOST_CHECK_EQUAL(header->cycle_period_ns.load(), 1'333'333u); // 64 frames at 48 kHz
    rig.run_cycles(1); // the writer is late: 80 frames left, still a cycle's worth
    BOOST_CHECK_EQUAL(pending_wakeups(s), 0u);
    rig.run_cycles(1); // 16 left
    BOOST_CHECK_EQUAL(pending_wakeups(s), 1u);
    BOOST_CHECK_EQUAL(s.xruns.load(), 0u);
}

BOOST_AUTO_TEST_CASE(gain_change_ramps_without_jumps_and_settles_exactly) {
    SinkRig rig;
    Stream& s = rig.add_stream(SampleFormat::s16le, 48000);
    const int16_t level = 20000;
    std::vector<int16_t> steady(size_t{40} * kQuantum * kChannels, level);
    rig.write(s, steady.data(), 40 * kQuantum);
    rig.set_client_flags(s, kClientFlagStarted);
    rig.run_cycles(2);
    rig.send({RtCommand::Kind::stream_gain, &s, 0.1f});
    rig.run_cycles(10);
    const auto out = rig.output<int16_t>();
    const uint32_t ramp = 48000 * Device::kRampMs / 1000;
    // The largest step a linear ramp may take, plus rounding.
    const double allowed = (level - level * 0.1) / ramp + 1.0;
    double worst = 0;
    for (size_t f = 1; f < out.size() / kChannels; ++f) {
        worst = std::max(worst, std::abs(double(out[f * kChannels]) - out[(f - 1) * kChannels]));
    }
    BOOST_CHECK_LE(worst, allowed);
    BOOST_CHECK_GT(worst, 0.0);
    // After the ramp the level is exactly the target.
    const int16_t settled = static_cast<int16_t>(std::lrint(level * 0.1f));
    BOOST_CHECK_EQUAL(out[(2 * kQuantum + ramp + 1) * kChannels], settled);
    BOOST_CHECK_EQUAL(out.back(), settled);

    // Back to unity: bit-exact again once the ramp is over.
    rig.send({RtCommand::Kind::stream_gain, &s, 1.0f});
    rig.run_cycles(10);
    const auto after = rig.output<int16_t>();
    BOOST_CHECK_EQUAL(after.back(), level);
}

BOOST_AUTO_TEST_CASE(pause_and_resume_alter_no_sample) {
    SinkRig rig;
    Stream& s = rig.add_stream(SampleFormat::s16le, 8192);
    std::vector<int16_t> counter(size_t{16} * kQuantum * kChannels);
    for (size_t i = 0; i < counter.size(); ++i) {
        counter[i] = static_cast<int16_t>(i / kChannels + 1);
    }
    rig.write(s, counter.data(), 16 * kQuantum);
    rig.set_client_flags(s, kClientFlagStarted);
    rig.run_cycles(3);
    rig.send({RtCommand::Kind::pause, &s, 1.0f});
    rig.run_cycles(4);
    rig.send({RtCommand::Kind::resume, &s, 1.0f});
    rig.run_cycles(13);
    const auto out = rig.output<int16_t>();
    std::vector<int16_t> heard;
    for (size_t f = 0; f < out.size() / kChannels; ++f) {
        if (out[f * kChannels] != 0) {
            heard.push_back(out[f * kChannels]);
        }
    }
    BOOST_REQUIRE_EQUAL(heard.size(), size_t{16} * kQuantum);
    for (size_t i = 0; i < heard.size(); ++i) {
        BOOST_REQUIRE_EQUAL(heard[i], static_cast<int16_t>(i + 1));
    }
    // Silence while paused, and no underruns counted for it.
    BOOST_CHECK_EQUAL(out[4 * kQuantum * kChannels], 0);
    BOOST_CHECK_EQUAL(s.xruns.load(), 0u);
}

BOOST_AUTO_TEST_CASE(sink_gain_applies_to_the_mix) {
    SinkRig rig;
    Stream& s = rig.add_stream(SampleFormat::s16le, 4096);
    std::vector<int16_t> data(size_t{20} * kQuantum * kChannels, 8000);
    rig.write(s, data.data(), 20 * kQuantum);
    rig.set_client_flags(s, kClientFlagStarted);
    rig.send({RtCommand::Kind::device_gain, nullptr, 0.5f});
    rig.run_cycles(20);
    const auto out = rig.output<int16_t>();
    BOOST_CHECK_EQUAL(out[0], 8000); // the ramp starts at the old gain
    BOOST_CHECK_EQUAL(out.back(), 4000);
}

BOOST_AUTO_TEST_SUITE_END()
