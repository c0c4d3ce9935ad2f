// Commands for RT threads that do not fit wait, in order
// (engine/rt_command_queue.h): a device whose RT thread is behind fills its
// own bounded queue; nothing sent after that overtakes what waits, for any
// device.
#include "engine/rt_command_queue.h"
#include "unit/server/stepped_sink.h"

#include <boost/test/unit_test.hpp>

using namespace audiod;
using namespace audiod::test;

BOOST_AUTO_TEST_SUITE(rt_command_queue)

BOOST_AUTO_TEST_CASE(what_does_not_fit_waits_and_nothing_overtakes_it) {
    SinkRig behind({48000, 2, 64}, "s16le", "behind");
    SinkRig other({48000, 2, 64}, "s16le", "other");
    RtCommandQueue queue;
    const RtCommand gain{RtCommand::Kind::device_gain, nullptr, 0.5f};
    // Its RT thread runs no cycle: its own queue fills, then ours takes over.
    size_t sent = 0;
    while (queue.waiting() == 0) {
        queue.send(*behind.sink, gain);
        BOOST_REQUIRE_LT(++sent, 100000u);
    }
    BOOST_CHECK_GT(sent, 1u);
    // A device with room still waits its turn behind them.
    queue.send(*other.sink, gain);
    BOOST_CHECK_EQUAL(queue.waiting(), 2u);
    queue.retry(); // nothing has moved
    BOOST_CHECK_EQUAL(queue.waiting(), 2u);
    // One cycle takes every command queued for it; then all goes.
    behind.run_cycles(1);
    queue.retry();
    BOOST_CHECK_EQUAL(queue.waiting(), 0u);
}

BOOST_AUTO_TEST_CASE(what_waits_for_a_device_that_stopped_is_dropped) {
    SinkRig gone({48000, 2, 64}, "s16le", "gone");
    SinkRig other({48000, 2, 64}, "s16le", "other");
    RtCommandQueue queue;
    const RtCommand gain{RtCommand::Kind::device_gain, nullptr, 0.5f};
    while (queue.waiting() == 0) {
        queue.send(*gone.sink, gain);
    }
    queue.send(*other.sink, gain);
    queue.forget(*gone.sink);
    BOOST_CHECK_EQUAL(queue.waiting(), 1u);
    queue.retry();
    BOOST_CHECK_EQUAL(queue.waiting(), 0u);
}

BOOST_AUTO_TEST_SUITE_END()
