#include "engine/groups.h"

#include "engine/device_registry.h"
#include "engine/relays.h"

#include "device/stream.h"

#include "audiod/audiod.h"

#include <algorithm>
#include <cstdio>

namespace audiod {

namespace {

GroupMember* member_of(GroupConfig& group, const std::string& sink) {
    const auto it = std::find_if(group.local.begin(), group.local.end(),
                                 [&](const GroupMember& m) { return m.sink == sink; });
    return it == group.local.end() ? nullptr : &*it;
}

bool same_member(const GroupMember& a, const GroupMember& b) {
    return a.sink == b.sink && a.delay_ms == b.delay_ms && a.volume == b.volume &&
           a.muted == b.muted;
}

} // namespace

int64_t Groups::replayed_after_ns(const GroupConfig& group, const GroupMember& member) noexcept {
    return (int64_t{group.link_offset_ms} - member.delay_ms) * 1'000'000;
}

std::vector<std::string> Groups::configure(const std::vector<GroupConfig>& groups) {
    const auto configured = [&](const std::string& name) {
        return std::any_of(groups.begin(), groups.end(),
                           [&](const GroupConfig& g) { return g.name == name; });
    };
    const auto kept_as_made = [&](const std::string& name) {
        return std::find(made_.begin(), made_.end(), name) != made_.end() && !configured(name);
    };
    // A member whose group or settings changed starts again; the rest play
    // on. Groups made at run time stay as they are (with their members),
    // unless the configuration now names one.
    std::vector<GroupConfig> next_groups = groups;
    for (GroupConfig& running : groups_) {
        if (kept_as_made(running.name)) {
            next_groups.push_back(running);
            continue;
        }
        const auto next = std::find_if(groups.begin(), groups.end(), [&](const GroupConfig& g) {
            return g.name == running.name;
        });
        for (const GroupMember& member : running.local) {
            bool kept = next != groups.end() && next->link_offset_ms == running.link_offset_ms;
            if (kept) {
                const auto same =
                    std::find_if(next->local.begin(), next->local.end(),
                                 [&](const GroupMember& m) { return m.sink == member.sink; });
                kept = same != next->local.end() && same_member(*same, member);
            }
            if (!kept) {
                relays_.stop(Relays::replay_name(running.name, member.sink));
            }
        }
    }
    std::erase_if(made_, configured);
    groups_ = std::move(next_groups);
    return sync();
}

MaybeError Groups::create(const GroupConfig& group) {
    if (find(group.name) != nullptr) {
        return ClientError{AUDIOD_E_INVALID, "there is already a group named '" + group.name + "'"};
    }
    groups_.push_back(group);
    made_.push_back(group.name);
    return std::nullopt;
}

bool Groups::remove(const std::string& name) {
    const auto group = std::find_if(groups_.begin(), groups_.end(),
                                    [&](const GroupConfig& g) { return g.name == name; });
    if (group == groups_.end()) {
        return false;
    }
    for (const GroupMember& member : group->local) {
        relays_.stop(Relays::replay_name(name, member.sink));
    }
    groups_.erase(group);
    std::erase(made_, name);
    return true;
}

std::vector<std::string> Groups::sync() {
    std::vector<std::string> errors;
    for (const GroupConfig& group : groups_) {
        for (const GroupMember& member : group.local) {
            if (std::string error = start(group, member); !error.empty()) {
                errors.push_back(std::move(error));
            }
        }
    }
    return errors;
}

std::string Groups::start(const GroupConfig& group, const GroupMember& member) {
    Device* sink = devices_.find_sink(group.name);
    if (sink == nullptr || devices_.find_sink(member.sink) == nullptr ||
        relays_.find(Relays::replay_name(group.name, member.sink)) != nullptr) {
        return {}; // when both are here, or already playing
    }
    RelayRequest request;
    request.sink = member.sink;
    request.replayed_after_ns = replayed_after_ns(group, member);
    request.volume = member.volume;
    request.muted = member.muted;
    if (const Status started = relays_.start(*sink, request); !started.ok()) {
        return "group '" + group.name + "': local sink '" + member.sink +
               "' does not play: " + started.reason();
    }
    return {};
}

MaybeError Groups::join(const std::string& name, const GroupMember& member) {
    const auto group = std::find_if(groups_.begin(), groups_.end(),
                                    [&](const GroupConfig& g) { return g.name == name; });
    if (group == groups_.end()) {
        return ClientError{AUDIOD_E_NOENTITY, "no group named '" + name + "'"};
    }
    if (devices_.find_sink(member.sink) == nullptr) {
        return ClientError{AUDIOD_E_NOENTITY, "no sink named '" + member.sink + "'"};
    }
    if (find(member.sink) != nullptr) {
        return ClientError{AUDIOD_E_INVALID,
                           "'" + member.sink + "' is a group; a group's members are plain sinks"};
    }
    if (member.delay_ms + GroupConfig::kMinReplayMs > group->link_offset_ms) {
        return ClientError{AUDIOD_E_INVALID,
                           "delay-ms = " + std::to_string(member.delay_ms) + " leaves less than " +
                               std::to_string(GroupConfig::kMinReplayMs) +
                               " ms of the link offset (" + std::to_string(group->link_offset_ms) +
                               " ms) to play in step"};
    }
    if (GroupMember* present = member_of(*group, member.sink)) {
        if (same_member(*present, member)) {
            return std::nullopt;
        }
        relays_.stop(Relays::replay_name(name, member.sink)); // starts again as now asked
        *present = member;
    } else {
        group->local.push_back(member);
    }
    if (std::string error = start(*group, member); !error.empty()) {
        return ClientError{AUDIOD_E_REFUSED, error};
    }
    return std::nullopt;
}

MaybeError Groups::leave(const std::string& name, const std::string& sink) {
    const auto group = std::find_if(groups_.begin(), groups_.end(),
                                    [&](const GroupConfig& g) { return g.name == name; });
    if (group == groups_.end()) {
        return ClientError{AUDIOD_E_NOENTITY, "no group named '" + name + "'"};
    }
    if (member_of(*group, sink) == nullptr) {
        return ClientError{AUDIOD_E_NOENTITY,
                           "'" + sink + "' is not a local member of group '" + name + "'"};
    }
    std::erase_if(group->local, [&](const GroupMember& m) { return m.sink == sink; });
    relays_.stop(Relays::replay_name(name, sink));
    return std::nullopt;
}

const GroupConfig* Groups::find(const std::string& name) const {
    const auto it = std::find_if(groups_.begin(), groups_.end(),
                                 [&](const GroupConfig& g) { return g.name == name; });
    return it == groups_.end() ? nullptr : &*it;
}

std::string Groups::details(const Device& sink) const {
    const GroupConfig* group = find(sink.name());
    if (group == nullptr) {
        return {};
    }
    std::string out = "group-link-offset-ms=" + std::to_string(group->link_offset_ms) + "\n";
    std::string names;
    for (const GroupMember& member : group->local) {
        names += (names.empty() ? "" : ",") + member.sink;
    }
    out += "group-local=" + names + "\n";
    // One line a member (a sink's details travel in a string of at most
    // 1 kB): group-local.SINK=state=...;stream=...;...
    for (const GroupMember& member : group->local) {
        out += "group-local." + member.sink + "=";
        const SourceRelay* relay = relays_.find(Relays::replay_name(group->name, member.sink));
        if (relay == nullptr) {
            out += "state=absent"; // its sink is not here
        } else {
            char error_us[32];
            std::snprintf(error_us, sizeof error_us, "%.1f", relay->sync_error_us());
            out += std::string("state=") + (relay->timed() ? "in-step" : "waiting") +
                   ";stream=" + std::to_string(relay->playback().id) +
                   ";sync-error-us=" + error_us + ";realigns=" + std::to_string(relay->realigns());
        }
        out += ";delay-ms=" + std::to_string(member.delay_ms) + "\n";
    }
    return out;
}

} // namespace audiod
