// audioctl's commands. Each returns the process exit status (0 success,
// 1 the server refused or failed, 2 a usage error) and prints its own
// output and errors.
#pragma once

#include "protocol/request_channel.h"

#include <cstdio>
#include <optional>
#include <string>
#include <vector>

namespace audiod::ctl {

struct Session {
    proto::RequestChannel channel;
    bool json = false;
    int timeout_ms = 2000;
    std::string socket_path; // the server reached
};

using Args = std::vector<std::string>;

// inspect.cpp
int run_list(Session& session, const Args& args);
int run_info(Session& session, const Args& args);

// control.cpp
int run_set_volume(Session& session, const Args& args);
int run_mute(Session& session, const Args& args);
int run_move_stream(Session& session, const Args& args);
int run_load_sink(Session& session, const Args& args);
int run_unload_sink(Session& session, const Args& args);
int run_load_source(Session& session, const Args& args);
int run_unload_source(Session& session, const Args& args);
int run_set_default_sink(Session& session, const Args& args);
int run_set_default_source(Session& session, const Args& args);
int run_suspend(Session& session, const Args& args);
int run_resume(Session& session, const Args& args);
int run_forget(Session& session, const Args& args);
int run_kill_client(Session& session, const Args& args);
int run_reload(Session& session, const Args& args);

// groups.cpp
int run_list_groups(Session& session);
int run_group_add(Session& session, const Args& args);
int run_group_remove(Session& session, const Args& args);
int run_group_create(Session& session, const Args& args);
int run_group_delete(Session& session, const Args& args);
int run_group_room(Session& session, const Args& args);

// watch.cpp
int run_watch(Session& session, const Args& args);

// Shared by the commands.
int usage(const std::string& message);
int server_error(const Session& session, const char* what, int rc);
// Sends a request answered by Ok; prints {"ok":true} with --json.
template <class Request>
int request_ok(Session& session, const char* what, const Request& request) {
    const int rc = session.channel.call(request, proto::MsgType::ok, nullptr,
                                        Deadline::after_ms(session.timeout_ms));
    if (rc != 0) {
        return server_error(session, what, rc);
    }
    if (session.json) {
        std::fputs("{\"ok\":true}\n", stdout);
    }
    return 0;
}

// A TARGET argument: a stream id, app:NAME, or (where `allow_device`)
// sink:NAME or source:NAME.
struct Target {
    uint32_t kind = 0; // proto::VolumeTarget
    uint32_t stream_id = 0;
    std::string name;
};
std::optional<Target> parse_target(const std::string& text, bool allow_device);
// A stream or client id: a positive 32-bit decimal number.
std::optional<uint32_t> parse_id(const std::string& text);

} // namespace audiod::ctl
