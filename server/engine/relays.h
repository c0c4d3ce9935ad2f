// Sources relayed into sinks (engine/source_relay.h): `[sources.NAME]
// sink = "SINK"`, or `audioctl load-source TYPE NAME sink=SINK`. Each relay
// is an in-process client of the engine: it gets a record stream on the
// source and a playback stream on the sink, made as a client's are, and
// its own thread carries the audio between them. Thread: control.
#pragma once

#include "common/status.h"
#include "engine/app_state.h"
#include "engine/device_registry.h"
#include "engine/source_relay.h"

#include <memory>
#include <string>
#include <vector>

namespace audiod {

class Engine;

class Relays {
public:
    // The relays' streams are made and closed through `engine`.
    Relays(Engine& engine, const DeviceRegistry& devices, const AppStateStore& state,
           const ServerConfig& config);
    Relays(const Relays&) = delete;
    Relays& operator=(const Relays&) = delete;

    // Starts relaying `source` into the request's sink; with
    // `replayed_after_ns`, `source` is a group's sink and the relay plays
    // its monitor (named replay_name(GROUP, SINK)).
    [[nodiscard]] Status start(Device& source, const RelayRequest& request);
    // Stops the relay so named (a source's name, or a replay's), if there
    // is one, and closes its streams.
    void stop(const std::string& name);
    // Stops the replays that record or play into `sink`, which is about to
    // go: a group's member plays nowhere else.
    void stop_replays_on(const Device& sink);
    [[nodiscard]] static std::string replay_name(const std::string& group,
                                                 const std::string& member) {
        return group + ">" + member;
    }
    [[nodiscard]] const SourceRelay* find(const std::string& name) const;
    // Tells each relayed source how its audio plays (a room's receiver
    // reports it to its sender): called about once a second.
    void tell_sources() const;
    // Stops every relay (their threads use streams that are about to go).
    void clear() { relays_.clear(); }

    [[nodiscard]] const SourceRelay* of(const Device& source) const;
    [[nodiscard]] const std::vector<std::unique_ptr<SourceRelay>>& all() const noexcept {
        return relays_;
    }
    // "key=value" lines for `audioctl list sources`.
    [[nodiscard]] static std::string details(const SourceRelay& relay);

private:
    // The timed relay's lines: whether it plays at the stamped times, and
    // how far off.
    [[nodiscard]] static std::string timing(const SourceRelay& relay);

    Engine& engine_;
    const DeviceRegistry& devices_;
    const AppStateStore& state_;
    const ServerConfig& config_;
    std::vector<std::unique_ptr<SourceRelay>> relays_;
};

} // namespace audiod
