// The three gains (engine/gains.h) as heard at a sink: stream x
// application x sink, mutes that keep the volume, a sink's gain kept
// across a reopen. Gains ramp over 5 ms (240 frames at 48 kHz): levels are
// read after it.
#include "unit/server/engine_rig.h"

#include <boost/test/unit_test.hpp>

#include <thread>

using namespace audiod;
using namespace audiod::test;

namespace {

constexpr int16_t kLevel = 16000;
// Cycles of 64 frames that a change takes to be heard in full.
constexpr uint64_t kSettle = 8;

proto::SetVolume volume_of(proto::VolumeTarget target, float value, uint32_t stream = 0,
                           const std::string& name = "") {
    proto::SetVolume r;
    r.target = static_cast<uint32_t>(target);
    r.stream_id = stream;
    r.name = name;
    r.mode = static_cast<uint32_t>(proto::VolumeMode::absolute);
    r.value = value;
    return r;
}

proto::SetMute mute_of(proto::VolumeTarget target, proto::MuteMode mode, const std::string& name) {
    proto::SetMute r;
    r.target = static_cast<uint32_t>(target);
    r.name = name;
    r.mode = static_cast<uint32_t>(mode);
    return r;
}

// Plays kSettle cycles on s1 and says the level of the last one.
double settle(EngineRig& rig) {
    rig.engine->tick(); // sends what waits
    step(*rig.s1, kSettle);
    return EngineRig::level(*rig.s1, 64);
}

} // namespace

BOOST_AUTO_TEST_SUITE(gains)

BOOST_AUTO_TEST_CASE(stream_application_and_sink_gains_multiply) {
    EngineRig rig;
    Stream& stream = rig.play_level(kLevel, 48000, "player");
    BOOST_CHECK_CLOSE(settle(rig), kLevel, 0.1);
    BOOST_REQUIRE(!rig.engine->set_volume(volume_of(proto::VolumeTarget::stream, 0.5f, stream.id)));
    BOOST_CHECK_CLOSE(settle(rig), kLevel * 0.5, 0.5);
    BOOST_REQUIRE(!rig.engine->set_volume(volume_of(proto::VolumeTarget::app, 0.5f, 0, "player")));
    BOOST_CHECK_CLOSE(settle(rig), kLevel * 0.25, 0.5);
    BOOST_REQUIRE(!rig.engine->set_volume(volume_of(proto::VolumeTarget::sink, 0.5f, 0, "s1")));
    BOOST_CHECK_CLOSE(settle(rig), kLevel * 0.125, 1);
    BOOST_CHECK_EQUAL(rig.engine->list_sinks()[0].volume, 0.5f);
    BOOST_CHECK_EQUAL(rig.engine->list_apps()[0].volume, 0.5f);
}

BOOST_AUTO_TEST_CASE(a_mute_silences_and_unmuting_brings_the_level_back) {
    EngineRig rig;
    rig.play_level(kLevel, 48000, "player");
    BOOST_REQUIRE(!rig.engine->set_volume(volume_of(proto::VolumeTarget::app, 0.5f, 0, "player")));
    BOOST_CHECK_CLOSE(settle(rig), kLevel * 0.5, 0.5);
    BOOST_REQUIRE(!rig.engine->set_mute(
        mute_of(proto::VolumeTarget::app, proto::MuteMode::toggle, "player")));
    BOOST_CHECK_EQUAL(settle(rig), 0.0);
    BOOST_REQUIRE(!rig.engine->set_mute(
        mute_of(proto::VolumeTarget::app, proto::MuteMode::toggle, "player")));
    BOOST_CHECK_CLOSE(settle(rig), kLevel * 0.5, 0.5);
    // Forgotten, it is back at 100 %, also while it plays.
    BOOST_REQUIRE(!rig.engine->forget_app("player"));
    BOOST_CHECK_CLOSE(settle(rig), kLevel, 0.1);
    BOOST_CHECK(rig.engine->forget_app("player").has_value()); // nothing left to forget
}

BOOST_AUTO_TEST_CASE(bad_changes_are_refused) {
    EngineRig rig;
    BOOST_CHECK(rig.engine->set_volume(volume_of(proto::VolumeTarget::stream, 0.5f, 99)));
    BOOST_CHECK(rig.engine->set_volume(volume_of(proto::VolumeTarget::sink, 0.5f, 0, "nosuch")));
    BOOST_CHECK(rig.engine->set_volume(
        volume_of(proto::VolumeTarget::sink, std::numeric_limits<float>::quiet_NaN(), 0, "s1")));
    BOOST_CHECK(rig.engine->set_volume(volume_of(proto::VolumeTarget::app, 0.5f, 0, "")));
    // Beyond +12 dB is clamped, not refused.
    BOOST_REQUIRE(!rig.engine->set_volume(volume_of(proto::VolumeTarget::sink, 10.0f, 0, "s1")));
    BOOST_CHECK_EQUAL(rig.engine->list_sinks()[0].volume, kMaxGain);
}

// A sink reopened after a failure plays at the volume it had (it came back
// at 100 % while keeping nothing of what was set).
BOOST_AUTO_TEST_CASE(a_sinks_volume_survives_a_reopen) {
    EngineRig rig(false);
    rig.play_level(kLevel, 96000);
    BOOST_REQUIRE(!rig.engine->set_volume(volume_of(proto::VolumeTarget::sink, 0.5f, 0, "s1")));
    BOOST_CHECK_CLOSE(settle(rig), kLevel * 0.5, 0.5);
    Device* failing = rig.engine->find_stream(1)->device();
    BOOST_REQUIRE(kill_device(*rig.s1, *failing));
    rig.engine->handle_events(failing->event_fd());
    // Reopened a second later (the stepped device always opens).
    std::this_thread::sleep_for(std::chrono::milliseconds(1100));
    rig.engine->tick();
    BOOST_REQUIRE_EQUAL(stepped_devices().size(), 1u);
    rig.s1 = stepped_devices()[0];
    BOOST_CHECK_EQUAL(rig.engine->list_sinks()[0].volume, 0.5f);
    BOOST_CHECK_CLOSE(settle(rig), kLevel * 0.5, 0.5);
}

BOOST_AUTO_TEST_SUITE_END()
