// audioctl: list and info.
#include "commands.h"

#include "audiod/audiod.h"
#include "output.h"

#include <cstdio>

namespace audiod::ctl {

namespace {

template <class Request, class Reply>
int fetch(Session& session, const char* what, Reply* reply) {
    const int rc =
        session.channel.call_for(Request{}, reply, Deadline::after_ms(session.timeout_ms));
    return rc == 0 ? 0 : server_error(session, what, rc);
}

} // namespace

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

int run_list(Session& session, const Args& args) {
    if (args.size() > 1) {
        return usage(
            "list takes at most one argument: sinks, sources, streams, clients, apps or groups");
    }
    const std::string what = args.empty() ? "all" : args[0];
    if (what != "all" && what != "sinks" && what != "sources" && what != "streams" &&
        what != "clients" && what != "apps" && what != "groups") {
        return usage("cannot list '" + what +
                     "' (use sinks, sources, streams, clients, apps or groups)");
    }
    if (what == "groups") {
        return run_list_groups(session);
    }
    if (what == "sources") {
        proto::SourceList sources;
        if (const int rc = fetch<proto::ListSources>(session, "list sources", &sources); rc != 0) {
            return rc;
        }
        const std::string out =
            session.json ? sources_json(sources.sources) : sources_text(sources.sources);
        std::fputs(out.c_str(), stdout);
        return 0;
    }
    if (what == "apps") {
        proto::AppList apps;
        if (const int rc = fetch<proto::ListApps>(session, "list apps", &apps); rc != 0) {
            return rc;
        }
        const std::string out = session.json ? apps_json(apps.apps) : apps_text(apps.apps);
        std::fputs(out.c_str(), stdout);
        return 0;
    }
    if (what == "clients") {
        proto::ClientList clients;
        if (const int rc = fetch<proto::ListClients>(session, "list clients", &clients); rc != 0) {
            return rc;
        }
        const std::string out =
            session.json ? clients_json(clients.clients) : clients_text(clients.clients);
        std::fputs(out.c_str(), stdout);
        return 0;
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

int run_info(Session& session, const Args& args) {
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
    const std::string out = session.json ? info_json(info, sinks.sinks, session.socket_path)
                                         : info_text(info, sinks.sinks, session.socket_path);
    std::fputs(out.c_str(), stdout);
    return 0;
}

} // namespace audiod::ctl
