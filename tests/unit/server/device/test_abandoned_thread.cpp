// A device whose RT thread is stuck inside a call into its module (a driver
// that does not return) is abandoned: the thread touches no stream and
// nothing of the device's from then on, the module instance stays open
// while the call uses it, and neither releasing nor destroying the device
// waits for the call.
#include "unit/server/stepped_sink.h"

#include <boost/test/unit_test.hpp>

#include <algorithm>
#include <chrono>
#include <thread>

using namespace audiod;
using namespace audiod::test;

namespace {

// SinkRig's default format: 64-frame quanta, stereo.
constexpr uint32_t kRigQuantum = 64;
constexpr uint32_t kRigChannels = 2;

// Abandons the device's thread once it waits inside its module's `wait`
// for a permit that the test does not give.
bool abandon_inside_wait(Device& device, const SteppedDevice& stepped) {
    const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    while (!stepped.waiting.load(std::memory_order_acquire)) {
        if (std::chrono::steady_clock::now() > give_up) {
            return false;
        }
        std::this_thread::sleep_for(std::chrono::microseconds(200));
    }
    return device.abandon();
}

bool instance_open(const SteppedDevice* device) {
    const auto& open = stepped_devices();
    return std::find(open.begin(), open.end(), device) != open.end();
}

// Waits (up to 10 s) until the device's module `wait` has returned `count`
// times in all.
void wait_for_returns(const SteppedDevice& device, uint64_t count) {
    const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    while (device.waits_returned.load(std::memory_order_acquire) < count) {
        BOOST_REQUIRE(std::chrono::steady_clock::now() < give_up);
        std::this_thread::sleep_for(std::chrono::microseconds(200));
    }
}

} // namespace

BOOST_AUTO_TEST_SUITE(abandoned_thread)

BOOST_AUTO_TEST_CASE(touches_nothing_once_its_module_call_returns) {
    SinkRig rig;
    Stream& stream = rig.add_stream(SampleFormat::s16le, 4096);
    const std::vector<int16_t> frames(size_t{4096} * kRigChannels, 7);
    rig.write(stream, frames.data(), 4096);
    rig.set_client_flags(stream, kClientFlagStarted);
    rig.run_cycles(2);
    const uint64_t consumed = stream.ring.header()->server_pos.load();
    BOOST_REQUIRE_EQUAL(consumed, 2u * kRigQuantum);
    const uint64_t played = rig.sink->frames_played();
    const uint64_t cycles = rig.device->cycles.load();

    BOOST_REQUIRE(abandon_inside_wait(*rig.sink, *rig.device));
    BOOST_CHECK(rig.sink->abandoned());
    BOOST_CHECK(rig.sink->failed());
    BOOST_CHECK(!rig.sink->rt_ended());
    BOOST_CHECK(!rig.sink->abandon()); // once
    // Releasing it now neither waits for the call nor closes what it uses.
    rig.sink->release();
    BOOST_CHECK(instance_open(rig.device));

    // The call returns: the thread ends without a cycle.
    const uint64_t returned = rig.device->waits_returned.load();
    rig.device->permits.release(3);
    wait_for_returns(*rig.device, returned + 1);
    const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    while (!rig.sink->rt_ended() && std::chrono::steady_clock::now() < give_up) {
        std::this_thread::sleep_for(std::chrono::microseconds(200));
    }
    BOOST_REQUIRE(rig.sink->rt_ended());
    BOOST_CHECK_EQUAL(rig.device->waits_returned.load(), returned + 1);
    BOOST_CHECK_EQUAL(rig.device->cycles.load(), cycles);
    BOOST_CHECK_EQUAL(rig.sink->frames_played(), played);
    BOOST_CHECK_EQUAL(stream.ring.header()->server_pos.load(), consumed);
    // Now the instance can be closed.
    const SteppedDevice* device = rig.device;
    rig.sink->release();
    BOOST_CHECK(!instance_open(device));
    rig.device = nullptr;
}

BOOST_AUTO_TEST_CASE(a_device_destroyed_meanwhile_leaves_the_call_what_it_uses) {
    SinkRig rig;
    rig.run_cycles(1);
    BOOST_REQUIRE(abandon_inside_wait(*rig.sink, *rig.device));
    // Destroying it returns at once and leaves the instance open.
    rig.sink.reset();
    BOOST_CHECK(instance_open(rig.device));
    // The call returns into a thread whose device is gone: it ends, touching
    // only what it shares with it (the sanitizer builds check that).
    const uint64_t returned = rig.device->waits_returned.load();
    rig.device->permits.release(1);
    wait_for_returns(*rig.device, returned + 1);
    // Past its last touch of the instance: close it, so that the tests after
    // this one find only their own devices open.
    stepped_module().sink->close(rig.device);
    rig.device = nullptr;
}

BOOST_AUTO_TEST_SUITE_END()
