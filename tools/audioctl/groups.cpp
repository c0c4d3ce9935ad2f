// audioctl: groups. `list groups` shows each group (a sink the server
// reports with a link offset), its local members and the rooms whose
// receivers report to it; group-add and group-remove change the local
// members until the configuration is reloaded.
#include "commands.h"

#include "common/json_writer.h"
#include "common/volume_level.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <variant>

namespace audiod::ctl {

namespace {

// One group as the server's sink details say it: its own fields, its
// local members and the rooms whose receivers report to it, each with
// its fields ("key=value;key=value" in the details).
struct GroupView {
    std::string name;
    std::map<std::string, std::string> fields;
    using Members = std::vector<std::pair<std::string, std::map<std::string, std::string>>>;
    Members local;
    Members rooms;
};

std::map<std::string, std::string> split_fields(const std::string& value) {
    std::map<std::string, std::string> fields;
    for (size_t from = 0; from < value.size();) {
        size_t end = value.find(';', from);
        end = end == std::string::npos ? value.size() : end;
        const std::string item = value.substr(from, end - from);
        if (const size_t equals = item.find('='); equals != std::string::npos) {
            fields[item.substr(0, equals)] = item.substr(equals + 1);
        }
        from = end + 1;
    }
    return fields;
}

// The members a "NAME,NAME" list names, each with the fields of PREFIX.NAME.
GroupView::Members members_of(std::map<std::string, std::string>& pairs, const std::string& list,
                              const std::string& prefix) {
    GroupView::Members members;
    const std::string& names = pairs[list];
    for (size_t from = 0; from < names.size();) {
        size_t comma = names.find(',', from);
        comma = comma == std::string::npos ? names.size() : comma;
        const std::string member = names.substr(from, comma - from);
        from = comma + 1;
        members.emplace_back(member, split_fields(pairs[prefix + member]));
    }
    return members;
}

std::vector<GroupView> groups_of(const std::vector<proto::SinkInfo>& sinks) {
    std::vector<GroupView> out;
    for (const proto::SinkInfo& sink : sinks) {
        std::map<std::string, std::string> pairs;
        size_t at = 0;
        while (at < sink.details.size()) {
            size_t end = sink.details.find('\n', at);
            end = end == std::string::npos ? sink.details.size() : end;
            const std::string line = sink.details.substr(at, end - at);
            at = end + 1;
            if (const size_t equals = line.find('='); equals != std::string::npos) {
                pairs[line.substr(0, equals)] = line.substr(equals + 1);
            }
        }
        if (pairs.count("group-link-offset-ms") == 0) {
            continue; // not a group
        }
        GroupView group;
        group.name = sink.name;
        group.fields = {{"state", sink.state},
                        {"link-offset-ms", pairs["group-link-offset-ms"]},
                        {"destination", pairs["destination"]},
                        {"payload", pairs["payload"]}};
        group.local = members_of(pairs, "group-local", "group-local.");
        group.rooms = members_of(pairs, "receivers", "receiver.");
        // A room's values come in the order receiver-fields names.
        const std::string& names = pairs["receiver-fields"];
        for (auto& [room, fields] : group.rooms) {
            std::map<std::string, std::string> named;
            const std::string& values = pairs["receiver." + room];
            size_t name_at = 0, value_at = 0;
            while (name_at < names.size() && value_at <= values.size()) {
                const size_t name_end = std::min(names.find(';', name_at), names.size());
                const size_t value_end = std::min(values.find(';', value_at), values.size());
                named[names.substr(name_at, name_end - name_at)] =
                    values.substr(value_at, value_end - value_at);
                name_at = name_end + 1;
                value_at = value_end + 1;
            }
            fields = std::move(named);
        }
        // What the sender asks of rooms (group-room), beside what they report;
        // a room asked and not heard from is listed too.
        for (const auto& [key, value] : pairs) {
            if (key.rfind("room-control.", 0) != 0) {
                continue;
            }
            const std::string room = key.substr(13);
            auto it = std::find_if(group.rooms.begin(), group.rooms.end(),
                                   [&](const auto& r) { return r.first == room; });
            if (it == group.rooms.end()) {
                group.rooms.emplace_back(room, std::map<std::string, std::string>{});
                it = group.rooms.end() - 1;
            }
            for (const auto& [field, asked] : split_fields(value)) {
                it->second["asked-" + field] = asked;
            }
        }
        out.push_back(std::move(group));
    }
    return out;
}

std::string text(const std::vector<GroupView>& groups) {
    std::string out;
    for (const GroupView& group : groups) {
        const auto field = [&](const char* key) {
            const auto it = group.fields.find(key);
            return it == group.fields.end() ? std::string() : it->second;
        };
        out += group.name + ": " + field("state") + ", to " + field("destination") + " (" +
               field("payload") + "), link offset " + field("link-offset-ms") + " ms\n";
        if (group.local.empty()) {
            out += "  no local members\n";
        }
        for (const auto& [name, fields] : group.local) {
            const auto get = [&](const char* key) {
                const auto it = fields.find(key);
                return it == fields.end() ? std::string("-") : it->second;
            };
            out += "  " + name + ": " + get("state") + ", stream " + get("stream") + ", delay-ms " +
                   get("delay-ms") + ", sync error " + get("sync-error-us") + " us, realigns " +
                   get("realigns") + "\n";
        }
        if (group.rooms.empty()) {
            out += "  no room reports to it\n";
        }
        for (const auto& [name, fields] : group.rooms) {
            const auto get = [&](const char* key) {
                const auto it = fields.find(key);
                return it == fields.end() ? std::string("-") : it->second;
            };
            const bool timed = get("timed") == "yes";
            std::string asked;
            if (fields.count("asked-volume") != 0) {
                asked = ", asked volume " + format_volume(std::atof(get("asked-volume").c_str())) +
                        (get("asked-mute") == "yes" ? ", muted" : "") + ", delay-ms " +
                        get("asked-delay-ms");
            }
            if (fields.count("heard-s-ago") == 0) {
                out += "  room " + name + ": not heard from" + asked + "\n";
                continue;
            }
            out += "  room " + name + ": " +
                   (timed ? "timed by " + get("clock-source") + ", sync error " +
                                get("sync-error-us") + " us, realigns " + get("realigns") +
                                ", link offset " + get("link-offset-ms") + " ms, delay-ms " +
                                get("delay-ms")
                          : std::string("not timed")) +
                   ", lost " + get("lost-percent") + " %, jitter " + get("jitter-ms") +
                   " ms, heard " + get("heard-s-ago") + " s ago" + asked + "\n";
        }
    }
    return out.empty() ? "no groups\n" : out;
}

// A value as JSON: a number where it is one.
void put(JsonWriter& w, const std::string& value) {
    char* end = nullptr;
    const double number = std::strtod(value.c_str(), &end);
    if (!value.empty() && end == value.c_str() + value.size()) {
        w.value(number);
    } else {
        w.value(value);
    }
}

std::string json(const std::vector<GroupView>& groups) {
    JsonWriter w;
    w.begin_array();
    for (const GroupView& group : groups) {
        w.begin_object();
        w.key("name");
        w.value(group.name);
        for (const auto& [key, value] : group.fields) {
            w.key(key);
            put(w, value);
        }
        for (const auto& [key, members] :
             {std::pair{"local", &group.local}, std::pair{"rooms", &group.rooms}}) {
            w.key(key);
            w.begin_array();
            for (const auto& [name, fields] : *members) {
                w.begin_object();
                w.key(std::string_view(key) == "local" ? "sink" : "name");
                w.value(name);
                for (const auto& [field, value] : fields) {
                    w.key(field);
                    put(w, value);
                }
                w.end_object();
            }
            w.end_array();
        }
        w.end_object();
    }
    w.end_array();
    return w.str() + "\n";
}

} // namespace

int run_list_groups(Session& session) {
    proto::SinkList sinks;
    const int rc = session.channel.call_for(proto::ListSinks{}, &sinks,
                                            Deadline::after_ms(session.timeout_ms));
    if (rc != 0) {
        return server_error(session, "list groups", rc);
    }
    const std::vector<GroupView> groups = groups_of(sinks.sinks);
    const std::string out = session.json ? json(groups) : text(groups);
    std::fputs(out.c_str(), stdout);
    return 0;
}

int run_group_add(Session& session, const Args& args) {
    if (args.size() < 2 || args.size() > 3) {
        return usage("group-add takes GROUP SINK [delay-ms=N]");
    }
    proto::SetGroupMember request;
    request.group = args[0];
    request.sink = args[1];
    if (args.size() == 3) {
        const std::string& option = args[2];
        const std::string key = "delay-ms=";
        char* end = nullptr;
        const unsigned long ms =
            option.rfind(key, 0) == 0 ? std::strtoul(option.c_str() + key.size(), &end, 10) : 0;
        if (end == nullptr || *end != '\0' || option.size() == key.size() || ms > 10000) {
            return usage("invalid '" + option + "' (use delay-ms=N, N from 0 to 10000)");
        }
        request.delay_ms = static_cast<uint32_t>(ms);
    }
    return request_ok(session, "group-add", request);
}

int run_group_remove(Session& session, const Args& args) {
    if (args.size() != 2) {
        return usage("group-remove takes GROUP SINK");
    }
    proto::SetGroupMember request;
    request.group = args[0];
    request.sink = args[1];
    request.member = false;
    return request_ok(session, "group-remove", request);
}

int run_group_create(Session& session, const Args& args) {
    if (args.empty()) {
        return usage("group-create takes NAME [KEY=VALUE]... (an rtp sink's options and "
                     "link-offset-ms)");
    }
    // A sink of type "group" (Engine::create_group).
    Args load = {"group"};
    load.insert(load.end(), args.begin(), args.end());
    return run_load_sink(session, load);
}

int run_group_delete(Session& session, const Args& args) {
    if (args.size() != 1) {
        return usage("group-delete takes GROUP");
    }
    // Only a group: unloading a plain sink by this verb would be a slip.
    proto::SinkList sinks;
    const int rc = session.channel.call_for(proto::ListSinks{}, &sinks,
                                            Deadline::after_ms(session.timeout_ms));
    if (rc != 0) {
        return server_error(session, "group-delete", rc);
    }
    const std::vector<GroupView> groups = groups_of(sinks.sinks);
    if (std::none_of(groups.begin(), groups.end(),
                     [&](const GroupView& g) { return g.name == args[0]; })) {
        std::fprintf(stderr, "audioctl: group-delete: no group named '%s'\n", args[0].c_str());
        return 1;
    }
    return run_unload_sink(session, args);
}

int run_group_room(Session& session, const Args& args) {
    if (args.size() < 3) {
        return usage("group-room takes GROUP ROOM and volume=LEVEL, mute=on|off, "
                     "delay-ms=N|own, or reset");
    }
    proto::SetGroupRoom request;
    request.group = args[0];
    request.room = args[1];
    for (size_t i = 2; i < args.size(); ++i) {
        const std::string& arg = args[i];
        const size_t equals = arg.find('=');
        const std::string key = arg.substr(0, equals);
        const std::string value = equals == std::string::npos ? "" : arg.substr(equals + 1);
        if (arg == "reset" && args.size() == 3) {
            request.reset = true;
        } else if (key == "volume") {
            const auto level = parse_volume_level(value);
            if (const auto* error = std::get_if<std::string>(&level)) {
                return usage(*error);
            }
            const VolumeLevel& parsed = std::get<VolumeLevel>(level);
            if (parsed.mode != LevelMode::absolute) {
                return usage("a room's volume is a level (80%, 0.8, -2dB), not a step");
            }
            request.set_volume = true;
            request.volume = static_cast<float>(parsed.value);
        } else if (key == "mute" && (value == "on" || value == "off")) {
            request.set_mute = true;
            request.muted = value == "on";
        } else if (key == "delay-ms") {
            char* end = nullptr;
            const long ms = value == "own" ? -1 : std::strtol(value.c_str(), &end, 10);
            if (value != "own" && (value.empty() || *end != '\0' || ms < 0 || ms > 9999)) {
                return usage("invalid '" + arg + "' (use delay-ms=N, N from 0 to 9999, or own)");
            }
            request.set_delay = true;
            request.delay_ms = static_cast<int32_t>(ms);
        } else {
            return usage("invalid '" + arg +
                         "' (use volume=LEVEL, mute=on|off, delay-ms=N|own, or reset alone)");
        }
    }
    return request_ok(session, "group-room", request);
}

} // namespace audiod::ctl
