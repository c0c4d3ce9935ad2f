// The engine: every device and stream, and what the control thread does
// with them. It is a façade over parts with one job each (doc/design.md
// says why they are cut so):
//
//   DeviceRegistry    devices by name, the default sink, reopening
//   DeviceLifecycle   devices opened, closed, failing and back while streams play
//   StreamTable       streams by id, what a client may ask for and hold
//   Router            where streams play; moves; failover (on Placement)
//   RtCommandQueue    commands to the RT threads, in order
//   Gains             stream x application x sink volumes and mutes
//   plan_reload       a new configuration as a plan, checked first
//   RtWatchdog        RT threads that stop completing cycles
//   Relays            sources relayed into sinks
//   Groups            sinks every room plays in step, this machine's sinks too
//   DiscoveredSources network sessions that sources find
//   StatusReport      what `audioctl list` and `info` show
//   SyncWatch         timed relays that fall out of step, and back
//   Announcer         events for the control server
//
// The engine wires them together, makes streams (placed by the router,
// admitted by the table), hands RT events to the parts, and carries out a
// reload's plan.
//
// Ownership. The stream table owns each Stream. While a stream is
// attached to a device, that device's RT thread uses it too; it stops only
// when the RT thread hands it back (RtEvent::detached), which comes after
// every command queued for the stream. A stream is freed, or attached to
// another device, only then (device/placement.h).
//
// Thread: control, for every member.
#pragma once

#include "config/config.h"
#include "engine/announcer.h"
#include "engine/app_state.h"
#include "engine/client_error.h"
#include "engine/device_lifecycle.h"
#include "engine/device_registry.h"
#include "engine/discovered_sources.h"
#include "engine/gains.h"
#include "engine/groups.h"
#include "engine/module_loader.h"
#include "engine/relays.h"
#include "engine/router.h"
#include "engine/rt_command_queue.h"
#include "engine/rt_watchdog.h"
#include "engine/state_file_writer.h"
#include "engine/status_report.h"
#include "engine/stream_table.h"
#include "engine/sync_watch.h"

#include <string>
#include <variant>
#include <vector>

namespace audiod {

class Engine {
public:
    Engine(ServerConfig config, ModuleLoader& modules, AppStateStore& state);
    Engine(const Engine&) = delete;
    Engine& operator=(const Engine&) = delete;
    ~Engine();

    void set_observer(EngineObserver* observer) noexcept { announcer_.set_observer(observer); }

    // Opens every configured device and starts its RT thread; fails with
    // the reason the first one failed.
    Status start();
    // Stops all RT threads, then frees all streams and devices.
    void stop();

    // ---- streams ----
    [[nodiscard]] std::variant<Stream*, ClientError> create_stream(const StreamRequest& request);
    [[nodiscard]] Stream* find_stream(uint32_t id) const { return streams_.find(id); }
    [[nodiscard]] MaybeError set_paused(Stream& stream, bool paused) {
        return router_.set_paused(stream, paused);
    }
    [[nodiscard]] MaybeError flush(Stream& stream, uint64_t position) {
        return router_.flush(stream, position);
    }
    // The stream is freed once its RT thread lets go of it.
    void close_stream(Stream& stream) { router_.close(stream); }

    // ---- devices and routing ----
    // A sink or capture source opened or closed at run time; a closed
    // device's streams move to the default sink (record streams: to its
    // monitor).
    // A sink of type "group" is a group made at run time (`audioctl
    // group-create`): an rtp sink with `link-offset-ms` (engine/groups.h),
    // gone when its sink is unloaded.
    [[nodiscard]] MaybeError load_device(DeviceKind kind, const std::string& type,
                                         const std::string& name, const OptionList& options);
    [[nodiscard]] MaybeError unload_device(DeviceKind kind, const std::string& name);
    // Closes a device for another program to use, or opens it again
    // (device_lifecycle.h).
    [[nodiscard]] MaybeError suspend_device(DeviceKind kind, const std::string& name,
                                            bool suspended) {
        return lifecycle_.suspend(kind, name, suspended);
    }
    [[nodiscard]] MaybeError set_default_sink(const std::string& name);
    // What record streams that name no source record: a capture source or
    // a sink's monitor ("SINK.monitor"), remembered across restarts.
    [[nodiscard]] MaybeError set_default_source(const std::string& name);
    [[nodiscard]] std::string default_source() const { return devices_.default_source(); }
    // The same, for a sink or a capture source by name (no two share one).
    [[nodiscard]] MaybeError suspend_device(const std::string& name, bool suspended);
    [[nodiscard]] MaybeError create_group(const std::string& name, const OptionList& options);
    // Asks a room of a group (a receiver elsewhere, by the name it reports)
    // for settings, through the group's sink (rtp sink `control`).
    [[nodiscard]] MaybeError control_group_room(const std::string& group, const std::string& room,
                                                const GroupRoomRequest& request);
    // A local sink joins a group (or changes its settings), or leaves it,
    // until the configuration is reloaded (engine/groups.h).
    [[nodiscard]] MaybeError join_group(const std::string& group, const GroupMember& member) {
        return groups_.join(group, member);
    }
    [[nodiscard]] MaybeError leave_group(const std::string& group, const std::string& sink) {
        return groups_.leave(group, sink);
    }
    [[nodiscard]] MaybeError move(const proto::MoveStream& request) {
        return router_.move(request);
    }
    // Applies a new configuration while streams play: returns what changed,
    // one line, then a line per device that could not be opened; or an
    // error, and nothing changed, if `next` cannot work (reload_plan.h).
    [[nodiscard]] std::variant<std::string, ClientError> reload(ServerConfig next);

    // ---- volume and mute ----
    [[nodiscard]] MaybeError set_volume(const proto::SetVolume& r) { return gains_.set_volume(r); }
    [[nodiscard]] MaybeError set_mute(const proto::SetMute& r) { return gains_.set_mute(r); }
    [[nodiscard]] MaybeError forget_app(const std::string& app) { return gains_.forget_app(app); }

    // ---- reports ----
    [[nodiscard]] std::vector<proto::SinkInfo> list_sinks() const { return status_.sinks(); }
    [[nodiscard]] std::vector<proto::StreamInfo> list_streams() const { return status_.streams(); }
    [[nodiscard]] std::vector<proto::AppInfo> list_apps() const { return status_.apps(); }
    [[nodiscard]] std::vector<proto::SourceInfo> list_sources() const { return status_.sources(); }
    [[nodiscard]] proto::ServerInfo info() const { return status_.info(); }
    [[nodiscard]] const ServerConfig& config() const noexcept { return config_; }

    // ---- housekeeping ----
    // Handles the RT events of the device behind `fd`.
    void handle_events(int fd);
    // Re-sends queued commands, watches the RT threads, reopens failed
    // devices, opens discovered sources, announces stream state changes,
    // saves the state file. Call periodically.
    void tick();

private:
    // "has failed", or "is suspended ..." for a device failed() because a
    // client suspended it.
    [[nodiscard]] std::string why_not_running(const Device& device) const;
    // The default source: one chosen at run time if it is here, else the
    // configured one ("": the default sink's monitor).
    [[nodiscard]] std::string wanted_default_source() const;
    // Hands the configuration's [apps.NAME] rules to the state store.
    void take_app_rules();
    // Hands the state file's new text to the writer, and logs a failed write
    // (the state is then written again).
    void save_state();

    ServerConfig config_;
    ModuleLoader& modules_;
    AppStateStore& state_;
    StateFileWriter state_writer_; // the control thread never waits for the disk
    audiod_host host_{};
    Announcer announcer_;
    RtCommandQueue commands_;
    DeviceRegistry devices_;
    StreamTable streams_;
    Gains gains_;
    Router router_;
    Relays relays_;
    Groups groups_;
    DiscoveredSources discovered_;
    DeviceLifecycle lifecycle_;
    RtWatchdog watchdog_;
    StatusReport status_;
    SyncWatch sync_watch_;
};

} // namespace audiod
