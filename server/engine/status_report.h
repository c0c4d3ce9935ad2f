// What `audioctl list` and `audioctl info` show, and the stream state
// changes announced to listeners (a stream that starts, stalls, drains).
// Thread: control.
#pragma once

#include "config/config.h"
#include "engine/announcer.h"
#include "engine/app_state.h"
#include "engine/device_registry.h"
#include "engine/groups.h"
#include "engine/relays.h"
#include "engine/stream_table.h"

#include <chrono>
#include <string>
#include <vector>

namespace audiod {

class StatusReport {
public:
    StatusReport(const DeviceRegistry& devices, const StreamTable& streams, const Relays& relays,
                 const Groups& groups, const AppStateStore& state, Announcer& announcer,
                 const ServerConfig& config);

    [[nodiscard]] std::vector<proto::SinkInfo> sinks() const;
    [[nodiscard]] std::vector<proto::StreamInfo> streams() const;
    // Every capture source and every sink's monitor.
    [[nodiscard]] std::vector<proto::SourceInfo> sources() const;
    // Applications playing now, remembered (settings or when they last
    // played) or with a rule in the configuration, by name.
    [[nodiscard]] std::vector<proto::AppInfo> apps() const;
    [[nodiscard]] proto::ServerInfo info() const;

    // Announces every stream whose state changed since it was last announced.
    void announce_changes();
    // Uptime counts from here.
    void mark_started() { started_at_ = std::chrono::steady_clock::now(); }

    // "starting", "running", "stalled", "paused", "moving", "draining", "drained".
    [[nodiscard]] std::string state_of(const Stream& stream) const;

private:
    // Starved for the configuration's stall-timeout-ms.
    [[nodiscard]] bool is_stalled(const Stream& stream) const;

    const DeviceRegistry& devices_;
    const StreamTable& streams_;
    const Relays& relays_;
    const Groups& groups_;
    const AppStateStore& state_;
    Announcer& announcer_;
    const ServerConfig& config_;
    std::chrono::steady_clock::time_point started_at_ = std::chrono::steady_clock::now();
};

} // namespace audiod
