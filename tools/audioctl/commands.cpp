#include "commands.h"

#include "audiod/audiod.h"
#include "output.h"
#include "volume_level.h"

#include <cerrno>
#include <cstdio>
#include <cstdlib>

namespace audiod::ctl {

namespace {

int usage(const std::string& message) {
    std::fprintf(stderr, "audioctl: %s\nTry 'audioctl --help' for more information.\n",
                 message.c_str());
    return 2;
}

int server_error(const Session& session, const char* what, int rc) {
    const std::string& detail = session.channel.last_error();
    std::fprintf(stderr, "audioctl: %s: %s\n", what,
                 detail.empty() ? audiod_strerror(rc) : detail.c_str());
    return 1;
}

template <class Request, class Reply>
int fetch(Session& session, const char* what, Reply* reply) {
    const int rc =
        session.channel.call_for(Request{}, reply, Deadline::after_ms(session.timeout_ms));
    return rc == 0 ? 0 : server_error(session, what, rc);
}

} // namespace

int run_list(Session& session, const std::vector<std::string>& args) {
    if (args.size() > 1) {
        return usage("list takes at most one argument: sinks or streams");
    }
    const std::string what = args.empty() ? "all" : args[0];
    if (what != "all" && what != "sinks" && what != "streams") {
        return usage("cannot list '" + what + "' (use sinks or streams)");
    }
    proto::SinkList sinks;
    proto::StreamList streams;
    if (what != "streams") {
        if (const int rc = fetch<proto::ListSinks>(session, "list sinks", &sinks); rc != 0) {
            return rc;
        }
    }
    if (what != "sinks") {
        if (const int rc = fetch<proto::ListStreams>(session, "list streams", &streams); rc != 0) {
            return rc;
        }
    }
    std::string out;
    if (session.json) {
        out = what == "sinks"     ? sinks_json(sinks.sinks)
              : what == "streams" ? streams_json(streams.streams)
                                  : all_json(sinks.sinks, streams.streams);
    } else if (what == "sinks") {
        out = sinks_text(sinks.sinks);
    } else if (what == "streams") {
        out = streams_text(streams.streams);
    } else {
        out = "Sinks:\n" + sinks_text(sinks.sinks) + "\nStreams:\n" + streams_text(streams.streams);
    }
    std::fputs(out.c_str(), stdout);
    return 0;
}

int run_info(Session& session, const std::vector<std::string>& args) {
    if (!args.empty()) {
        return usage("info takes no arguments");
    }
    proto::ServerInfo info;
    proto::SinkList sinks;
    if (const int rc = fetch<proto::GetInfo>(session, "info", &info); rc != 0) {
        return rc;
    }
    if (const int rc = fetch<proto::ListSinks>(session, "list sinks", &sinks); rc != 0) {
        return rc;
    }
    const std::string out =
        session.json ? info_json(info, sinks.sinks) : info_text(info, sinks.sinks);
    std::fputs(out.c_str(), stdout);
    return 0;
}

int run_set_volume(Session& session, const std::vector<std::string>& args) {
    if (args.size() != 2) {
        return usage("set-volume takes TARGET and LEVEL, e.g. set-volume 7 50%");
    }
    proto::SetVolume request;
    const std::string& target = args[0];
    if (target.rfind("sink:", 0) == 0) {
        request.target = static_cast<uint32_t>(proto::VolumeTarget::sink);
        request.name = target.substr(5);
    } else {
        char* end = nullptr;
        errno = 0;
        const unsigned long id = std::strtoul(target.c_str(), &end, 10);
        if (target.empty() || errno != 0 || *end != '\0' || id == 0 || id > UINT32_MAX) {
            return usage("invalid target '" + target + "' (a stream id, or sink:NAME)");
        }
        request.target = static_cast<uint32_t>(proto::VolumeTarget::stream);
        request.stream_id = static_cast<uint32_t>(id);
    }
    const auto level = parse_volume_level(args[1]);
    if (const auto* error = std::get_if<std::string>(&level)) {
        return usage(*error);
    }
    const VolumeLevel& parsed = std::get<VolumeLevel>(level);
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
    const int rc = session.channel.call(request, proto::MsgType::ok, nullptr,
                                        Deadline::after_ms(session.timeout_ms));
    return rc == 0 ? 0 : server_error(session, "set-volume", rc);
}

} // namespace audiod::ctl
