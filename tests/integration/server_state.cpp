#include "server_state.h"

#include "protocol/messages.h"
#include "protocol/request_channel.h"
#include "protocol/socket_path.h"
#include "tools/audioctl/output.h"

#include <stdexcept>

namespace audiod::test {

namespace {

template <class Request, class Reply>
bool fetch(proto::RequestChannel& channel, Reply* reply, const Deadline& deadline) {
    return channel.call_for(Request{}, reply, deadline) == 0;
}

} // namespace

std::string list_json(const std::string& what) {
    proto::RequestChannel channel;
    std::string socket;
    if (channel.connect_first(client_socket_paths(), &socket) != 0) {
        return "";
    }
    // audioctl's patience in the tests (helpers.cpp's run_tool).
    const Deadline deadline = Deadline::after_ms(10000);
    proto::Hello hello;
    hello.app_name = "test-probe";
    proto::HelloReply greeting;
    if (channel.call_for(hello, &greeting, deadline) != 0) {
        return "";
    }
    if (what == "streams") {
        proto::StreamList list;
        return fetch<proto::ListStreams>(channel, &list, deadline) ? ctl::streams_json(list.streams)
                                                                   : "";
    }
    if (what == "sinks") {
        proto::SinkList list;
        return fetch<proto::ListSinks>(channel, &list, deadline) ? ctl::sinks_json(list.sinks) : "";
    }
    if (what == "sources") {
        proto::SourceList list;
        return fetch<proto::ListSources>(channel, &list, deadline) ? ctl::sources_json(list.sources)
                                                                   : "";
    }
    if (what == "clients") {
        proto::ClientList list;
        return fetch<proto::ListClients>(channel, &list, deadline) ? ctl::clients_json(list.clients)
                                                                   : "";
    }
    if (what == "apps") {
        proto::AppList list;
        return fetch<proto::ListApps>(channel, &list, deadline) ? ctl::apps_json(list.apps) : "";
    }
    throw std::invalid_argument("list_json: no list of " + what);
}

} // namespace audiod::test
