// The source relay's queue (engine/source_relay.h), driven one cycle at
// a time on stepped devices, so that no timing is involved: a sink that
// has yet to take its first frames is waited for, one that stops taking
// for a while after it has started is dropped back to the target.
#include "device/stream.h"
#include "engine/source_relay.h"
#include "unit/server/stepped_sink.h"

#include <boost/test/unit_test.hpp>

#include <chrono>
#include <cmath>
#include <thread>

using namespace audiod;
using namespace audiod::test;
using namespace std::chrono_literals;

namespace {

constexpr uint32_t kQuantum = 64;
constexpr uint32_t kTarget = 512;

// A source recording into a relay that plays into a sink, both devices at
// 48 kHz with 64-frame cycles that the test runs one by one.
struct RelayRig {
    RelayRig()
        : record(source.add_stream(SampleFormat::f32le, 9600, 1.0f, 48000, 2, true))
        , playback(sink.add_stream(SampleFormat::f32le, 24000, 1.0f, 48000, 2))
        , relay(SourceRelay::start("unit", record, playback, kTarget, kQuantum, kQuantum, 0)) {
        BOOST_REQUIRE(relay);
    }

    // Waits (up to 10 s) until the relay has carried over all the source
    // has recorded.
    bool relay_caught_up() const {
        const RingHeader* recorded = record.ring.header();
        const auto deadline = std::chrono::steady_clock::now() + 10s;
        while (std::chrono::steady_clock::now() < deadline) {
            if (recorded->client_pos.load() == recorded->server_pos.load()) {
                return true;
            }
            std::this_thread::sleep_for(200us);
        }
        return false;
    }

    // `cycles` cycles of the source, each followed by one of the sink if
    // it takes.
    void run(int cycles, bool sink_takes) {
        for (int i = 0; i < cycles; ++i) {
            source.run_cycles(1);
            BOOST_REQUIRE(relay_caught_up());
            if (sink_takes) {
                sink.run_cycles(1);
            }
        }
    }

    SinkRig source{{48000, 2, kQuantum}};
    SinkRig sink{{48000, 2, kQuantum}};
    Stream& record;
    Stream& playback;
    std::unique_ptr<SourceRelay> relay;
};

} // namespace

BOOST_AUTO_TEST_SUITE(source_relay)

// The playback stream may reach the sink's thread many cycles after the
// relay starts (on a busy machine, the control thread hands it over
// late). What is recorded meanwhile cannot be heard by anyone: the queue
// waits at its starting level, and the sink starts from there, with no
// resync counted and no extra latency.
BOOST_AUTO_TEST_CASE(a_sink_that_has_yet_to_take_is_waited_for) {
    RelayRig rig;
    rig.run(100, false); // 6400 frames recorded, five times the overfill limit
    BOOST_CHECK_EQUAL(rig.playback.consumed.load(), 0u);
    rig.run(200, true);
    BOOST_CHECK_EQUAL(rig.relay->resyncs(), 0u);
    BOOST_CHECK_EQUAL(rig.relay->refills(), 0u);
    BOOST_CHECK_EQUAL(rig.playback.consumed.load(), 200u * kQuantum);
    BOOST_CHECK_LE(std::fabs(rig.relay->queued_frames() - kTarget), 2.0 * kQuantum);
}

// Once the sink has taken, a pause in its taking (the stream between
// sinks, its device away) leaves a queue too long to keep: the relay
// drops input until it is back at the target, and counts a resync.
BOOST_AUTO_TEST_CASE(a_sink_that_stops_taking_for_a_while_is_dropped_back_to_the_target) {
    RelayRig rig;
    rig.run(100, true);
    BOOST_CHECK_EQUAL(rig.relay->resyncs(), 0u);
    rig.run(100, false);
    rig.run(200, true);
    BOOST_CHECK_EQUAL(rig.relay->resyncs(), 1u);
    BOOST_CHECK_EQUAL(rig.relay->refills(), 0u);
    BOOST_CHECK_LE(std::fabs(rig.relay->queued_frames() - kTarget), 2.0 * kQuantum);
}

BOOST_AUTO_TEST_SUITE_END()
