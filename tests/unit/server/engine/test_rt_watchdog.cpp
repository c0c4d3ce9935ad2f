// The RT watchdog (Engine::tick) on the real Engine and stepped sinks: a
// sink whose thread completes no cycle while the server runs is found
// stalled, then given up; a server held as a whole (SIGSTOP, a debugger, a
// frozen VM) is no stalled sink, however long it was held.
#include "unit/server/engine_rig.h"

#include <boost/test/unit_test.hpp>

#include <chrono>
#include <optional>
#include <string>
#include <thread>

using namespace audiod;
using namespace audiod::test;
using namespace std::chrono_literals;

namespace {

std::string state_of(const Engine& engine, const std::string& sink) {
    for (const auto& info : engine.list_sinks()) {
        if (info.name == sink) {
            return info.state;
        }
    }
    return "absent";
}

// Ticks as the control thread does (every 50 ms, well inside the gap that
// reads as a held server) until `sink` is in `state`; returns how long that
// took, or nothing after 20 s.
std::optional<std::chrono::steady_clock::duration>
tick_until(Engine& engine, const std::string& sink, const std::string& state) {
    const auto start = std::chrono::steady_clock::now();
    while (std::chrono::steady_clock::now() - start < 20s) {
        engine.tick();
        if (state_of(engine, sink) == state) {
            return std::chrono::steady_clock::now() - start;
        }
        std::this_thread::sleep_for(50ms);
    }
    return std::nullopt;
}

} // namespace

BOOST_AUTO_TEST_SUITE(rt_watchdog)

BOOST_AUTO_TEST_CASE(a_sink_that_stops_cycling_is_found_stalled_then_given_up) {
    EngineRig rig(false);
    Stream& stream = rig.play(4000);
    step(*rig.s1, 1);
    // From here s1's thread waits inside its module for a cycle the test
    // never allows: a driver that does not return.
    const auto stalled = tick_until(*rig.engine, "s1", "stalled");
    BOOST_REQUIRE_MESSAGE(stalled, "s1 is " << state_of(*rig.engine, "s1"));
    BOOST_CHECK(*stalled >= kRtWatchdogTimeout - 100ms);
    const auto failed = tick_until(*rig.engine, "s1", "failed");
    BOOST_REQUIRE_MESSAGE(failed, "s1 is " << state_of(*rig.engine, "s1"));
    BOOST_CHECK(stream.device()->failed());
    // The driver call returns at last: the thread ends, and the device with
    // it (else the next test would find it still open).
    rig.s1->stopping = true;
    const auto give_up = std::chrono::steady_clock::now() + 10s;
    while (!stream.device()->rt_ended() && std::chrono::steady_clock::now() < give_up) {
        std::this_thread::sleep_for(1ms);
    }
    BOOST_CHECK(stream.device()->rt_ended());
}

BOOST_AUTO_TEST_CASE(a_server_held_as_a_whole_has_no_stalled_sink) {
    EngineRig rig;
    Stream& stream = rig.play(4000);
    step(*rig.s1, 1);
    rig.engine->tick();
    // Held longer than a stuck driver is given: the control thread does
    // not look, and the sinks' threads, held alike, have not run again when
    // it does. (An 8 s SIGSTOP of the server: its first look after found
    // both sinks of a test stalled and gave them up.)
    std::this_thread::sleep_for(kRtAbandonTimeout + 500ms);
    rig.engine->tick();
    BOOST_CHECK_EQUAL(state_of(*rig.engine, "s1"), "running");
    BOOST_CHECK_EQUAL(state_of(*rig.engine, "s2"), "running");
    BOOST_REQUIRE(!stream.device()->failed());
    BOOST_CHECK_EQUAL(stream.device()->name(), "s1");
    // And it plays on where it was.
    step(*rig.s1, 1);
    const auto heard = EngineRig::heard(*rig.s1);
    BOOST_REQUIRE_EQUAL(heard.size(), 128u);
    for (int64_t f = 0; f < 128; ++f) {
        BOOST_REQUIRE_EQUAL(heard[f], f);
    }
    // A sink still silent once the server runs again is found as before.
    BOOST_CHECK(tick_until(*rig.engine, "s2", "stalled"));
}

// A device that arrives while the server runs (loaded, or reopened) has
// its silence counted from its arrival: it was counted from the clock's
// epoch, so the first look after it came found it stalled before its
// first cycle, and gave it up if its thread waited in its module.
BOOST_AUTO_TEST_CASE(a_device_that_has_just_arrived_is_not_stalled) {
    EngineRig rig(false);
    rig.engine->tick(); // the first look, counted as held
    BOOST_REQUIRE(!rig.engine->load_device(DeviceKind::sink, "stepped", "late", {}));
    BOOST_REQUIRE_EQUAL(stepped_devices().size(), 2u);
    SteppedDevice& late = *stepped_devices()[1];
    rig.engine->tick();
    BOOST_CHECK_EQUAL(state_of(*rig.engine, "late"), "running");
    // And a second on, without a cycle, it is.
    BOOST_CHECK(tick_until(*rig.engine, "late", "stalled"));
    step(late, 1);
    BOOST_CHECK(tick_until(*rig.engine, "late", "running"));
}

BOOST_AUTO_TEST_SUITE_END()
