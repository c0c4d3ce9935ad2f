#include "server_state.h"

#include "protocol/messages.h"
#include "protocol/request_channel.h"
#include "protocol/socket_path.h"
#include "tools/audioctl/output.h"

#include <stdexcept>

namespace audiod::test {

namespace {

// REQUEST's reply, its ITEMS printed by PRINT; "" if the server refused.
template <class Request, class Reply, class Items>
std::string listed(proto::RequestChannel& channel, const Deadline& deadline, Items Reply::*items,
                   std::string (*print)(const Items&)) {
    Reply reply;
    return channel.call_for(Request{}, &reply, deadline) == 0 ? print(reply.*items) : "";
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
        return listed<proto::ListStreams>(channel, deadline, &proto::StreamList::streams,
                                          ctl::streams_json);
    }
    if (what == "sinks") {
        return listed<proto::ListSinks>(channel, deadline, &proto::SinkList::sinks,
                                        ctl::sinks_json);
    }
    if (what == "sources") {
        return listed<proto::ListSources>(channel, deadline, &proto::SourceList::sources,
                                          ctl::sources_json);
    }
    if (what == "clients") {
        return listed<proto::ListClients>(channel, deadline, &proto::ClientList::clients,
                                          ctl::clients_json);
    }
    if (what == "apps") {
        return listed<proto::ListApps>(channel, deadline, &proto::AppList::apps, ctl::apps_json);
    }
    throw std::invalid_argument("list_json: no list of " + what);
}

} // namespace audiod::test
