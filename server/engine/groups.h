// Groups: `[groups.NAME]`, one stream heard in every room of a house. A
// group is an RTP sink (its table's other keys are the sink's options)
// that the rooms' receivers play at the sender's times plus the group's
// link offset; moving a stream into it is moving it to that sink.
//
// This machine's own sinks can be members too (`local`): each plays the
// group sink's monitor through a replay, a relay (engine/relays.h) whose
// record stream is stamped with when the group sink plays each frame plus
// the link offset, less the member's `delay-ms`. The relay plays those
// frames at those times, as a room's receiver does, so the local speakers
// are in step with the rooms. A member's playback stream is an ordinary
// stream of application "group:GROUP@SINK" (its volume, mute, remembered
// level), pinned to its sink.
//
// What is wanted (the configuration, then `audioctl group-create`,
// `group-add/-remove`) is kept here; sync() makes the replays match it whenever devices come
// and go, so a member sink unloaded and loaded again plays the group again.
// Thread: control.
#pragma once

#include "config/config.h"
#include "engine/client_error.h"

#include <algorithm>
#include <string>
#include <vector>

namespace audiod {

class DeviceRegistry;
class Device;
class Relays;

class Groups {
public:
    Groups(Relays& relays, const DeviceRegistry& devices)
        : relays_(relays)
        , devices_(devices) {}
    Groups(const Groups&) = delete;
    Groups& operator=(const Groups&) = delete;

    // The groups now wanted (a start or a reload): members no longer in
    // them stop, new ones start. Returns a message per member that could
    // not start.
    std::vector<std::string> configure(const std::vector<GroupConfig>& groups);
    // Starts the replays of members whose sinks are here and that have none.
    std::vector<std::string> sync();

    // A group made at run time (`audioctl group-create`), its sink already
    // loaded; it lives through reloads unless the configuration names a
    // group of its name. remove() ends any group (its sink stays).
    [[nodiscard]] MaybeError create(const GroupConfig& group);
    bool remove(const std::string& name);
    [[nodiscard]] bool made_at_run_time(const std::string& name) const {
        return std::find(made_.begin(), made_.end(), name) != made_.end();
    }

    [[nodiscard]] MaybeError join(const std::string& group, const GroupMember& member);
    [[nodiscard]] MaybeError leave(const std::string& group, const std::string& sink);

    [[nodiscard]] const GroupConfig* find(const std::string& name) const;
    // "key=value" lines for `audioctl list sinks` of the group's sink: its
    // link offset and each member's state.
    [[nodiscard]] std::string details(const Device& sink) const;

private:
    // When a member hears the group sink's frames after the sink plays them.
    [[nodiscard]] static int64_t replayed_after_ns(const GroupConfig& group,
                                                   const GroupMember& member) noexcept;
    // Starts one member's replay; "" or why not.
    std::string start(const GroupConfig& group, const GroupMember& member);

    Relays& relays_;
    const DeviceRegistry& devices_;
    std::vector<GroupConfig> groups_;
    std::vector<std::string> made_; // the names of those made at run time
};

} // namespace audiod
