// The three gains: stream x application x sink, each with a mute. A
// stream plays at its volume times its application's, silenced if either
// is muted; a sink's volume and mute apply to its whole mix. A record
// stream's level is its own times its capture source's (a source's volume
// and mute apply to all it captures; a monitor records what its sink
// plays): application volumes are about what is played. Application settings are remembered
// (engine/app_state.h). A stream between devices gets its gain when it lands. Thread: control.
#pragma once

#include "device/messages.h"
#include "engine/announcer.h"
#include "engine/app_state.h"
#include "engine/client_error.h"
#include "engine/device_registry.h"
#include "engine/rt_command_queue.h"
#include "engine/stream_table.h"

#include <string>

namespace audiod {

// The highest stream, application or sink volume: +12 dB.
inline constexpr float kMaxGain = 4.0f;

class Gains {
public:
    Gains(StreamTable& streams, DeviceRegistry& devices, RtCommandQueue& commands,
          AppStateStore& state, const Announcer& announcer);

    [[nodiscard]] MaybeError set_volume(const proto::SetVolume& request);
    [[nodiscard]] MaybeError set_mute(const proto::SetMute& request);
    // Drops the settings remembered for an application (its rule or the
    // defaults apply again, also to its streams playing now).
    [[nodiscard]] MaybeError forget_app(const std::string& app);

    // The gain a stream plays at now.
    [[nodiscard]] float stream_gain(const Stream& stream) const;
    // Sends a stream's gain to its RT thread (unless it is between devices).
    void apply(Stream& stream);
    // Applies every stream's gain again (the application rules changed).
    void apply_all();
    // Sends a sink's gain to its device (a reopened device starts at unity).
    void apply_device(Device& device);
    // Whether `app` may name an application (it need not have played yet).
    [[nodiscard]] static MaybeError check_app(const std::string& app);

private:
    // Applies an application's settings to its streams and announces them.
    void apply_app(const std::string& app);
    // Applies a change to one of the three gains, then announces it.
    template <class Change>
    MaybeError change(uint32_t target, uint32_t stream_id, const std::string& name,
                      Change&& change);

    StreamTable& streams_;
    DeviceRegistry& devices_;
    RtCommandQueue& commands_;
    AppStateStore& state_;
    const Announcer& announcer_;
};

} // namespace audiod
