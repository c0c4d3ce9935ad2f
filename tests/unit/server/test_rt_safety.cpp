// The real-time rule, checked: the RT threads of real Sinks neither
// allocate, free, nor lock a mutex while streams attach, play, change
// volume, pause, move between the sinks, corrupt their rings and detach.
#define BOOST_TEST_MODULE rt_safety
#include <boost/test/unit_test.hpp>

#include "engine/source_relay.h"
#include "os/rt_scope.h"
#include "pulse/engine_ring.h"
#include "pulse/playback_stream.h"
#include "pulse/record_stream.h"
#include "rt_hooks.h"
#include "stepped_sink.h"

#include <mutex>
#include <random>
#include <thread>

using namespace audiod;
using namespace audiod::test;
using namespace std::chrono_literals;

namespace {

void check_no_rt_violations() {
    BOOST_CHECK_EQUAL(rt_violations().allocations.load(), 0u);
    BOOST_CHECK_EQUAL(rt_violations().frees.load(), 0u);
    BOOST_CHECK_EQUAL(rt_violations().locks.load(), 0u);
}

} // namespace

BOOST_AUTO_TEST_CASE(the_hooks_catch_what_they_should) {
    // If this fails, the test below proves nothing.
    rt_violations().reset();
    {
        RtScope scope;
        void* volatile p = std::malloc(32);
        std::free(p);
        std::mutex m;
        m.lock();
        m.unlock();
        auto* q = new int(3);
        delete q;
    }
    BOOST_CHECK_GE(rt_violations().allocations.load(), 2u);
    BOOST_CHECK_GE(rt_violations().frees.load(), 2u);
    BOOST_CHECK_GE(rt_violations().locks.load(), 1u);
    rt_violations().reset();
    void* volatile outside = std::malloc(32); // not in an RT scope: not counted
    std::free(outside);
    BOOST_CHECK_EQUAL(rt_violations().total(), 0u);
}

BOOST_AUTO_TEST_CASE(rt_cycle_never_allocates_or_locks_under_churn) {
    SinkRig rig({48000, 2, 64});
    SinkRig other({48000, 2, 32}); // a second RT thread to move streams to
    rig.run_cycles(2);
    other.run_cycles(2);
    rt_violations().reset();

    std::mt19937 rng(7);
    std::vector<int16_t> chunk(size_t{256} * 2, 1234);
    std::vector<Stream*> live;
    for (int round = 0; round < 300; ++round) {
        const auto action = rng() % 9;
        if (action == 0 || live.size() < 2) {
            // Direct streams, and converted ones: other formats, channel
            // counts and rates (resampled on the RT thread).
            const auto kind = rng() % 5;
            Stream* added = nullptr;
            if (kind == 0) {
                added = &rig.add_stream(SampleFormat::s16le, 1024 + rng() % 4096, 0.5f);
                rig.write(*added, chunk.data(), 256);
            } else if (kind == 1) {
                added = &rig.add_stream(SampleFormat::f32le, 1024 + rng() % 4096, 0.5f);
                std::vector<float> f(size_t{256} * 2, 0.25f);
                rig.write(*added, f.data(), 256);
            } else if (kind == 4) {
                // A recording of the sink, in another format, rate and layout.
                added =
                    &rig.add_stream(SampleFormat::s24_3le, 4096, 0.5f, 44100, 1 + rng() % 8, true);
            } else {
                const uint32_t rates[] = {8000, 22050, 44100, 96000, 192000};
                const auto format = kind == 2 ? SampleFormat::u8 : SampleFormat::s24_3le;
                const uint32_t channels = 1 + rng() % 8;
                added =
                    &rig.add_stream(format, 8192 + rng() % 4096, 0.5f, rates[rng() % 5], channels);
                std::vector<uint8_t> bytes(size_t{2048} * channels * sample_bytes(format), 0x40);
                rig.write(*added, bytes.data(), 2048);
            }
            rig.set_client_flags(*added, kClientFlagStarted);
            live.push_back(added);
        } else {
            Stream& s = *live[rng() % live.size()];
            switch (action) {
            case 1:
                rig.send({RtCommand::Kind::stream_gain, &s, float(rng() % 100) / 50.0f});
                break;
            case 2:
                rig.send({RtCommand::Kind::pause, &s, 1.0f});
                break;
            case 3:
                rig.send({RtCommand::Kind::resume, &s, 1.0f});
                break;
            case 4: // the client dies or closes: detach
                rig.send({RtCommand::Kind::detach, &s, 1.0f});
                std::erase(live, &s);
                break;
            case 5: // the client scribbles over its ring
                s.ring.header()->client_pos.store(~uint64_t{0} - (rng() % 1000));
                std::erase(live, &s);
                break;
            case 6: { // moved to the other sink while it plays, and back
                rig.send({RtCommand::Kind::detach, &s, 1.0f});
                rig.run_cycles(1);
                rig.events(1);
                other.send({RtCommand::Kind::attach, &s, 1.0f});
                other.run_cycles(2);
                other.send({RtCommand::Kind::detach, &s, 1.0f});
                other.run_cycles(1);
                other.events(1);
                rig.send({RtCommand::Kind::attach, &s, 1.0f});
                break;
            }
            case 7: // a seek: the queue dropped, sometimes at a position made up
                rig.send({RtCommand::Kind::flush, &s, 1.0f,
                          s.ring.header()->client_pos.load() + (rng() % 4 == 0 ? rng() : 0)});
                rig.set_client_flags(s, kClientFlagStarted);
                break;
            default:
                rig.send({RtCommand::Kind::device_gain, nullptr, float(rng() % 100) / 100.0f});
                break;
            }
        }
        rig.run_cycles(1 + rng() % 3);
        rig.events();
    }
    rig.run_cycles(5);
    check_no_rt_violations();
    BOOST_CHECK_GT(rig.device->cycles.load(), 300u);
    BOOST_CHECK_GT(other.device->cycles.load(), 20u);
}

// libpulse streams (pulse/playback_stream.h, record_stream.h): the pulse
// thread writes and reads their rings, corks, flushes, seeks and drains
// them, and the RT thread sees only the ring. Churned here as a player
// would, the rule holds.
BOOST_AUTO_TEST_CASE(pulse_streams_never_make_the_rt_thread_allocate_or_lock) {
    SinkRig rig({48000, 2, 64});
    rig.run_cycles(2);
    const pulse::SampleSpec spec{static_cast<uint8_t>(pulse::SampleFormat::s16le), 2, 48000};
    const pulse::ChannelMap map{{1, 2}};
    pulse::BufferAttributes asked;
    asked.tlength = 4 * 4800; // 100 ms
    const pulse::BufferAttributes attributes = pulse::playback_attributes(asked, 4, 48000, 1333);
    Stream& played = rig.add_stream(SampleFormat::s16le, 4800);
    pulse::PlaybackStream playback(0, spec, map, attributes);
    BOOST_REQUIRE_EQUAL(playback.bind(std::move(*pulse::hand_over_ring(played, "test", 1333))), "");
    Stream& recorded = rig.add_stream(SampleFormat::s16le, 4800, 1.0f, 0, 0, true);
    pulse::BufferAttributes record_asked;
    record_asked.fragsize = 4 * 480;
    pulse::RecordStream record(1, spec, map, pulse::record_attributes(record_asked, 4, 48000));
    BOOST_REQUIRE_EQUAL(record.bind(std::move(*pulse::hand_over_ring(recorded, "test", 1333))), "");
    rig.run_cycles(2);
    rt_violations().reset();

    std::mt19937 rng(11);
    const std::vector<uint8_t> chunk(4 * 960, 0x21);
    uint32_t room = playback.take_first_request();
    for (int round = 0; round < 300; ++round) {
        room += playback.take_request();
        if (room >= chunk.size()) {
            playback.write(chunk, 0, pulse::SeekMode::relative);
            room -= static_cast<uint32_t>(chunk.size());
        }
        switch (rng() % 12) {
        case 0:
            playback.set_corked(true);
            rig.send({RtCommand::Kind::pause, &played, 1.0f});
            break;
        case 1:
            playback.set_corked(false);
            rig.send({RtCommand::Kind::resume, &played, 1.0f});
            break;
        case 2: // FLUSH
            rig.send({RtCommand::Kind::flush, &played, 1.0f, playback.flush_position()});
            break;
        case 3: // a seek back over what is queued
            playback.write(chunk, -static_cast<int64_t>(chunk.size()), pulse::SeekMode::relative);
            break;
        case 4:
            playback.drain(static_cast<uint32_t>(round));
            break;
        case 5:
            playback.trigger();
            break;
        case 6:
            record.flush();
            break;
        default:
            break;
        }
        (void)playback.drained(pulse::PlaybackStream::Clock::now());
        (void)playback.take_started();
        (void)playback.take_underflow();
        (void)record.take_chunk();
        rig.run_cycles(1 + rng() % 3);
        rig.events();
    }
    rig.run_cycles(5);
    check_no_rt_violations();
    // Audio went both ways.
    BOOST_CHECK_GT(played.ring.header()->server_pos.load(), 4800u);
    BOOST_CHECK_GT(record.read_index(), 0);
}

// A source relayed into a sink (engine/source_relay.h): the relay's thread
// is in the audio path too, and keeps the same rule while it carries a
// recording of one device into a stream on another, resampling as the
// clock loop says.
BOOST_AUTO_TEST_CASE(a_source_relay_never_allocates_or_locks) {
    SinkRig source({48000, 2, 64});
    SinkRig sink({48000, 2, 64});
    source.run_cycles(2);
    sink.run_cycles(2);
    Stream& record = source.add_stream(SampleFormat::f32le, 9600, 1.0f, 48000, 2, true);
    Stream& playback = sink.add_stream(SampleFormat::f32le, 24000, 1.0f, 48000, 2);
    rt_violations().reset();
    auto relay = SourceRelay::start("rt-test", record, playback, 512, 64, 64, 0);
    // The source runs a little faster than the sink, so the loop acts.
    for (int i = 0; i < 20000 && playback.consumed.load() < 96000; ++i) {
        source.run_cycles(i % 50 == 0 ? 2 : 1);
        std::this_thread::sleep_for(100us);
        sink.run_cycles(1);
        std::this_thread::sleep_for(100us);
    }
    relay.reset();
    BOOST_CHECK_GE(playback.consumed.load(), 96000u);
    check_no_rt_violations();
}
