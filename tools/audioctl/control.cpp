// audioctl: commands that change things — volume, mute, moves, sinks.
#include "commands.h"

#include "common/json_writer.h"
#include "common/volume_level.h"

#include <cerrno>
#include <climits>
#include <cstdlib>

namespace audiod::ctl {

std::optional<uint32_t> parse_id(const std::string& text) {
    char* end = nullptr;
    errno = 0;
    const unsigned long id = std::strtoul(text.c_str(), &end, 10);
    if (text.empty() || text[0] == '-' || errno != 0 || *end != '\0' || id == 0 ||
        id > UINT32_MAX) {
        return std::nullopt;
    }
    return static_cast<uint32_t>(id);
}

std::optional<Target> parse_target(const std::string& text, bool allow_device) {
    Target target;
    if (text.rfind("app:", 0) == 0 && text.size() > 4) {
        target.kind = static_cast<uint32_t>(proto::VolumeTarget::app);
        target.name = text.substr(4);
        return target;
    }
    if (allow_device && text.rfind("sink:", 0) == 0 && text.size() > 5) {
        target.kind = static_cast<uint32_t>(proto::VolumeTarget::sink);
        target.name = text.substr(5);
        return target;
    }
    if (allow_device && text.rfind("source:", 0) == 0 && text.size() > 7) {
        target.kind = static_cast<uint32_t>(proto::VolumeTarget::source);
        target.name = text.substr(7);
        return target;
    }
    const auto id = parse_id(text);
    if (!id) {
        return std::nullopt;
    }
    target.kind = static_cast<uint32_t>(proto::VolumeTarget::stream);
    target.stream_id = *id;
    return target;
}

namespace {

// Whether application NAME has played (now or before), as far as the server
// knows; nullopt if it could not be asked.
std::optional<bool> has_played(Session& session, const std::string& name) {
    proto::AppList apps;
    if (session.channel.call_for(proto::ListApps{}, &apps,
                                 Deadline::after_ms(session.timeout_ms)) != 0) {
        return std::nullopt;
    }
    for (const proto::AppInfo& app : apps.apps) {
        if (app.name == name) {
            return app.streams > 0 || app.last_seen != 0;
        }
    }
    return false;
}

// Sends a change aimed at TARGET; one for an application that has never
// played is remembered for its first frame, and the user is told so (a
// typo shows up here).
template <class Request>
int change(Session& session, const char* what, const Target& target, const Request& request) {
    const bool app = target.kind == static_cast<uint32_t>(proto::VolumeTarget::app);
    const std::optional<bool> played = app ? has_played(session, target.name) : true;
    if (const int rc = request_ok(session, what, request); rc != 0) {
        return rc;
    }
    if (played && !*played && !session.json) {
        std::printf("%s has not played yet; remembered\n", target.name.c_str());
    }
    return 0;
}

} // namespace

int run_set_volume(Session& session, const Args& args) {
    if (args.size() != 2) {
        return usage("set-volume takes TARGET and LEVEL, e.g. set-volume 7 50%");
    }
    const auto target = parse_target(args[0], true);
    if (!target) {
        return usage("invalid target '" + args[0] +
                     "' (a stream id, app:NAME, sink:NAME or source:NAME)");
    }
    const auto level = parse_volume_level(args[1]);
    if (const auto* error = std::get_if<std::string>(&level)) {
        return usage(*error);
    }
    const VolumeLevel& parsed = std::get<VolumeLevel>(level);
    proto::SetVolume request;
    request.target = target->kind;
    request.stream_id = target->stream_id;
    request.name = target->name;
    switch (parsed.mode) {
    case LevelMode::absolute:
        request.mode = static_cast<uint32_t>(proto::VolumeMode::absolute);
        break;
    case LevelMode::relative_linear:
        request.mode = static_cast<uint32_t>(proto::VolumeMode::relative_linear);
        break;
    case LevelMode::relative_db:
        request.mode = static_cast<uint32_t>(proto::VolumeMode::relative_db);
        break;
    }
    request.value = static_cast<float>(parsed.value);
    return change(session, "set-volume", *target, request);
}

int run_mute(Session& session, const Args& args) {
    if (args.empty() || args.size() > 2) {
        return usage("mute takes TARGET and optionally on, off or toggle");
    }
    const auto target = parse_target(args[0], true);
    if (!target) {
        return usage("invalid target '" + args[0] +
                     "' (a stream id, app:NAME, sink:NAME or source:NAME)");
    }
    const std::string mode = args.size() == 2 ? args[1] : "on";
    proto::SetMute request;
    request.target = target->kind;
    request.stream_id = target->stream_id;
    request.name = target->name;
    if (mode == "on" || mode == "yes" || mode == "1") {
        request.mode = static_cast<uint32_t>(proto::MuteMode::on);
    } else if (mode == "off" || mode == "no" || mode == "0") {
        request.mode = static_cast<uint32_t>(proto::MuteMode::off);
    } else if (mode == "toggle") {
        request.mode = static_cast<uint32_t>(proto::MuteMode::toggle);
    } else {
        return usage("invalid mute mode '" + mode + "' (on, off or toggle)");
    }
    return change(session, "mute", *target, request);
}

int run_move_stream(Session& session, const Args& args) {
    if (args.size() != 2) {
        return usage("move-stream takes STREAM (an id or app:NAME) and SINK");
    }
    const auto target = parse_target(args[0], false);
    if (!target) {
        return usage("invalid stream '" + args[0] + "' (a stream id or app:NAME)");
    }
    proto::MoveStream request;
    request.target = target->kind;
    request.stream_id = target->stream_id;
    request.app = target->name;
    request.device = args[1];
    return change(session, "move-stream", *target, request);
}

int run_forget(Session& session, const Args& args) {
    if (args.size() != 1 || args[0].rfind("app:", 0) != 0 || args[0].size() <= 4) {
        return usage("forget takes app:NAME");
    }
    proto::ForgetApp request;
    request.name = args[0].substr(4);
    return request_ok(session, "forget", request);
}

int run_kill_client(Session& session, const Args& args) {
    const auto id = args.size() == 1 ? parse_id(args[0]) : std::nullopt;
    if (!id) {
        return usage("kill-client takes a client id (see audioctl list clients)");
    }
    proto::KillClient request;
    request.client_id = *id;
    return request_ok(session, "kill-client", request);
}

namespace {

int load_device(Session& session, const Args& args, bool source) {
    const char* command = source ? "load-source" : "load-sink";
    if (args.size() < 2) {
        return usage(std::string(command) + " takes TYPE NAME [KEY=VALUE]...");
    }
    proto::LoadDevice request;
    request.kind =
        static_cast<uint32_t>(source ? proto::DeviceKind::source : proto::DeviceKind::sink);
    request.type = args[0];
    request.name = args[1];
    for (size_t i = 2; i < args.size(); ++i) {
        const auto equals = args[i].find('=');
        if (equals == std::string::npos || equals == 0) {
            return usage("invalid option '" + args[i] + "' (use KEY=VALUE)");
        }
        request.options.push_back({args[i].substr(0, equals), args[i].substr(equals + 1)});
    }
    return request_ok(session, command, request);
}

int unload_device(Session& session, const Args& args, bool source) {
    const char* command = source ? "unload-source" : "unload-sink";
    if (args.size() != 1) {
        return usage(std::string(command) + " takes NAME");
    }
    proto::UnloadDevice request;
    request.kind =
        static_cast<uint32_t>(source ? proto::DeviceKind::source : proto::DeviceKind::sink);
    request.name = args[0];
    return request_ok(session, command, request);
}

} // namespace

int run_load_sink(Session& session, const Args& args) {
    return load_device(session, args, false);
}

int run_unload_sink(Session& session, const Args& args) {
    return unload_device(session, args, false);
}

int run_load_source(Session& session, const Args& args) {
    return load_device(session, args, true);
}

int run_unload_source(Session& session, const Args& args) {
    return unload_device(session, args, true);
}

int run_set_default_sink(Session& session, const Args& args) {
    if (args.size() != 1) {
        return usage("set-default-sink takes NAME");
    }
    proto::SetDefaultSink request;
    request.name = args[0];
    return request_ok(session, "set-default-sink", request);
}

int run_set_default_source(Session& session, const Args& args) {
    if (args.size() != 1) {
        return usage("set-default-source takes NAME (a source or SINK.monitor)");
    }
    proto::SetDefaultSource request;
    request.name = args[0];
    return request_ok(session, "set-default-source", request);
}

namespace {

int suspend_device(Session& session, const Args& args, bool suspended) {
    const char* what = suspended ? "suspend" : "resume";
    if (args.size() != 1) {
        return usage(std::string(what) + " takes the NAME of a sink or source");
    }
    proto::SuspendDevice request;
    request.name = args[0];
    request.suspended = suspended;
    return request_ok(session, what, request);
}

} // namespace

int run_suspend(Session& session, const Args& args) {
    return suspend_device(session, args, true);
}

int run_resume(Session& session, const Args& args) {
    return suspend_device(session, args, false);
}

int run_reload(Session& session, const Args& args) {
    if (!args.empty()) {
        return usage("reload takes no arguments");
    }
    proto::Reloaded reloaded;
    const int rc = session.channel.call_for(proto::Reload{}, &reloaded,
                                            Deadline::after_ms(session.timeout_ms));
    if (rc != 0) {
        return server_error(session, "reload", rc);
    }
    // The first line says what changed; any further line is a device that
    // could not be opened with its new settings.
    const bool partial = reloaded.summary.find("\nerror: ") != std::string::npos;
    if (session.json) {
        JsonWriter w;
        w.begin_object();
        w.key("ok");
        w.value(!partial);
        w.key("summary");
        w.value(std::string_view(reloaded.summary));
        w.end_object();
        std::printf("%s\n", w.str().c_str());
    } else {
        std::printf("%s\n", reloaded.summary.c_str());
    }
    return partial ? 1 : 0;
}

} // namespace audiod::ctl
