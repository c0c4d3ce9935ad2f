#include "control/request_handler.h"

#include "control/client_name.h"

#include "audiod/audiod.h"
#include "log.h"
#include "protocol/version.h"

#include <optional>

namespace audiod {

RequestHandler::RequestHandler(Engine& engine, ControlClients& clients, const ClientAccess& access,
                               std::vector<uint32_t>& doomed)
    : engine_(engine)
    , clients_(clients)
    , access_(access)
    , doomed_(doomed) {}

namespace {

// A device kind from the wire, which any client may fill in.
std::optional<DeviceKind> device_kind(uint32_t wire) {
    switch (static_cast<proto::DeviceKind>(wire)) {
    case proto::DeviceKind::sink:
        return DeviceKind::sink;
    case proto::DeviceKind::source:
        return DeviceKind::source;
    }
    return std::nullopt;
}

} // namespace

template <class M, class Action>
bool RequestHandler::answer(ControlClient& client, uint32_t seq, Body body, Action&& action) {
    M request;
    if (!proto::decode(body, request)) {
        reply_error(client, seq, AUDIOD_E_PROTOCOL, "malformed message");
        return false;
    }
    const MaybeError error = action(request);
    if (error) {
        return reply_error(client, seq, error->code, error->message);
    }
    return reply(client, seq, proto::Ok{});
}

bool RequestHandler::handle(ControlClient& client, const proto::Packet& packet) {
    const auto envelope = proto::parse_envelope(packet.bytes);
    if (!envelope) {
        reply_error(client, 0, AUDIOD_E_PROTOCOL, "message too short");
        return false;
    }
    if (!packet.fds.empty()) {
        // Only the server sends descriptors; the ones received are closed
        // with `packet`.
        reply_error(client, envelope->seq, AUDIOD_E_PROTOCOL, "unexpected file descriptors");
        return false;
    }
    const uint32_t seq = envelope->seq;
    const Body body = envelope->body;
    if (!client.greeted && envelope->type != proto::MsgType::hello) {
        reply_error(client, seq, AUDIOD_E_PROTOCOL, "the first message must be Hello");
        return false;
    }
    // Requests with no fields: check there are none, then answer.
    const auto empty_request = [&](auto request, auto&& make_reply) {
        if (!proto::decode(body, request)) {
            reply_error(client, seq, AUDIOD_E_PROTOCOL, "malformed message");
            return false;
        }
        return reply(client, seq, make_reply());
    };
    switch (envelope->type) {
    case proto::MsgType::hello:
        return handle_hello(client, seq, body);
    case proto::MsgType::create_stream:
        return handle_create_stream(client, seq, body);
    case proto::MsgType::stream_command:
        return handle_stream_command(client, seq, body);
    case proto::MsgType::flush_stream:
        return handle_flush_stream(client, seq, body);
    case proto::MsgType::set_volume:
        return answer<proto::SetVolume>(client, seq, body, [&](proto::SetVolume r) -> MaybeError {
            if (MaybeError denied = access_.check_target(client, r.target, r.stream_id, r.name)) {
                return denied;
            }
            return engine_.set_volume(r);
        });
    case proto::MsgType::set_mute:
        return answer<proto::SetMute>(client, seq, body, [&](proto::SetMute r) -> MaybeError {
            if (MaybeError denied = access_.check_target(client, r.target, r.stream_id, r.name)) {
                return denied;
            }
            return engine_.set_mute(r);
        });
    case proto::MsgType::move_stream:
        return answer<proto::MoveStream>(client, seq, body, [&](proto::MoveStream r) -> MaybeError {
            if (MaybeError denied = access_.check_target(client, r.target, r.stream_id, r.app)) {
                return denied;
            }
            return engine_.move(r);
        });
    case proto::MsgType::load_device:
        return answer<proto::LoadDevice>(
            client, seq, body, [&](const proto::LoadDevice& r) -> MaybeError {
                if (MaybeError denied = access_.require_admin(client, "loading a sink or source")) {
                    return denied;
                }
                const auto kind = device_kind(r.kind);
                if (!kind) {
                    return ClientError{AUDIOD_E_INVALID, "unknown device kind"};
                }
                std::vector<std::pair<std::string, std::string>> options;
                for (const auto& option : r.options) {
                    options.emplace_back(option.key, option.value);
                }
                return engine_.load_device(*kind, r.type, r.name, options);
            });
    case proto::MsgType::unload_device:
        return answer<proto::UnloadDevice>(client, seq, body, [&](const auto& r) -> MaybeError {
            if (MaybeError denied = access_.require_admin(client, "unloading a sink or source")) {
                return denied;
            }
            const auto kind = device_kind(r.kind);
            if (!kind) {
                return ClientError{AUDIOD_E_INVALID, "unknown device kind"};
            }
            return engine_.unload_device(*kind, r.name);
        });
    case proto::MsgType::reload: {
        proto::Reload request;
        if (!proto::decode(body, request)) {
            reply_error(client, seq, AUDIOD_E_PROTOCOL, "malformed message");
            return false;
        }
        if (MaybeError denied = access_.require_admin(client, "reloading the configuration")) {
            return reply_error(client, seq, denied->code, denied->message);
        }
        if (!reloader_) {
            return reply_error(client, seq, AUDIOD_E_NOTSUPPORTED, "this server cannot reload");
        }
        auto reloaded = reloader_();
        if (const auto* refused = std::get_if<ClientError>(&reloaded)) {
            return reply_error(client, seq, refused->code, refused->message);
        }
        proto::Reloaded answer;
        answer.summary = std::get<std::string>(std::move(reloaded));
        return reply(client, seq, answer);
    }
    case proto::MsgType::forget_app:
        return answer<proto::ForgetApp>(client, seq, body, [&](const auto& r) {
            return engine_.forget_app(
                requested_app(access_.policy(), access_.caller(client), r.name));
        });
    case proto::MsgType::kill_client:
        return answer<proto::KillClient>(client, seq, body, [&](const proto::KillClient& r) {
            return kill_client(client, r.client_id);
        });
    case proto::MsgType::set_default_sink:
        return answer<proto::SetDefaultSink>(client, seq, body, [&](const auto& r) -> MaybeError {
            if (MaybeError denied = access_.require_admin(client, "choosing the default sink")) {
                return denied;
            }
            return engine_.set_default_sink(r.name);
        });
    case proto::MsgType::set_default_source:
        return answer<proto::SetDefaultSource>(client, seq, body, [&](const auto& r) -> MaybeError {
            if (MaybeError denied = access_.require_admin(client, "choosing the default source")) {
                return denied;
            }
            return engine_.set_default_source(r.name);
        });
    case proto::MsgType::suspend_device:
        return answer<proto::SuspendDevice>(client, seq, body, [&](const auto& r) -> MaybeError {
            if (MaybeError denied =
                    access_.require_admin(client, "suspending or resuming a sink or source")) {
                return denied;
            }
            return engine_.suspend_device(r.name, r.suspended);
        });
    case proto::MsgType::set_group_member:
        return answer<proto::SetGroupMember>(client, seq, body, [&](const auto& r) -> MaybeError {
            if (MaybeError denied = access_.require_admin(client, "changing a group's members")) {
                return denied;
            }
            if (!r.member) {
                return engine_.leave_group(r.group, r.sink);
            }
            GroupMember member;
            member.sink = r.sink;
            member.delay_ms = r.delay_ms;
            return engine_.join_group(r.group, member);
        });
    case proto::MsgType::set_group_room:
        return answer<proto::SetGroupRoom>(client, seq, body, [&](const auto& r) -> MaybeError {
            if (MaybeError denied = access_.require_admin(client, "changing a group's rooms")) {
                return denied;
            }
            GroupRoomRequest request;
            request.reset = r.reset;
            if (r.set_volume) {
                request.volume = r.volume;
            }
            if (r.set_mute) {
                request.muted = r.muted;
            }
            if (r.set_delay) {
                request.delay_ms = r.delay_ms;
            }
            return engine_.control_group_room(r.group, r.room, request);
        });
    case proto::MsgType::subscribe:
        return answer<proto::Subscribe>(client, seq, body, [&](const auto&) {
            client.subscribed = true;
            return MaybeError{};
        });
    case proto::MsgType::list_sinks:
        return empty_request(proto::ListSinks{}, [&] {
            proto::SinkList list;
            list.sinks = engine_.list_sinks();
            return list;
        });
    case proto::MsgType::list_streams:
        return empty_request(proto::ListStreams{}, [&] {
            proto::StreamList list;
            list.streams = engine_.list_streams();
            access_.show_streams(client, list.streams);
            if (list.streams.size() > proto::kMaxListItems) {
                list.streams.resize(proto::kMaxListItems);
            }
            return list;
        });
    case proto::MsgType::list_clients:
        return handle_list_clients(client, seq, body);
    case proto::MsgType::list_sources:
        return empty_request(proto::ListSources{}, [&] {
            proto::SourceList list;
            list.sources = engine_.list_sources();
            return list;
        });
    case proto::MsgType::list_apps:
        return empty_request(proto::ListApps{}, [&] {
            proto::AppList list;
            list.apps = engine_.list_apps();
            access_.show_apps(client, list.apps);
            if (list.apps.size() > proto::kMaxListItems) {
                list.apps.resize(proto::kMaxListItems);
            }
            return list;
        });
    case proto::MsgType::get_info:
        return empty_request(proto::GetInfo{}, [&] {
            proto::ServerInfo info = engine_.info();
            info.clients = static_cast<uint32_t>(clients_.size());
            return info;
        });
    default:
        reply_error(client, seq, AUDIOD_E_PROTOCOL,
                    "unknown message type " +
                        std::to_string(static_cast<uint32_t>(envelope->type)));
        return false;
    }
}

bool RequestHandler::handle_hello(ControlClient& client, uint32_t seq, Body body) {
    proto::Hello hello;
    if (!proto::decode(body, hello) || client.greeted) {
        reply_error(client, seq, AUDIOD_E_PROTOCOL, "malformed or repeated Hello");
        return false;
    }
    if (hello.version != proto::kProtocolVersion) {
        reply_error(client, seq, AUDIOD_E_VERSION,
                    "protocol version " + std::to_string(hello.version) +
                        " is not supported (this server speaks " +
                        std::to_string(proto::kProtocolVersion) + ")");
        return false;
    }
    client.greeted = true;
    client.app = sanitize_name(hello.app_name);
    if (client.app.empty()) {
        client.app = client.executable.empty() ? "unknown" : client.executable;
    }
    proto::HelloReply answer;
    answer.client_id = client.id;
    answer.server_version = AUDIOD_VERSION_STRING;
    answer.rate = engine_.config().rate;
    answer.channels = engine_.config().channels;
    answer.quantum = engine_.config().quantum;
    return reply(client, seq, answer);
}

bool RequestHandler::handle_create_stream(ControlClient& client, uint32_t seq, Body body) {
    StreamRequest request;
    if (!proto::decode(body, request.params)) {
        reply_error(client, seq, AUDIOD_E_PROTOCOL, "malformed CreateStream");
        return false;
    }
    request.client_id = client.id;
    request.pid = static_cast<uint32_t>(client.pid);
    request.app = app_of(access_.policy(), access_.caller(client), client.app);
    auto created = engine_.create_stream(request);
    if (auto* error = std::get_if<ClientError>(&created)) {
        return reply_error(client, seq, error->code, error->message);
    }
    Stream& stream = *std::get<Stream*>(created);
    client.streams.push_back(stream.id);
    proto::StreamCreated answer;
    answer.stream_id = stream.id;
    answer.capacity_frames = stream.ring.capacity();
    answer.memory_bytes = stream.ring.memory_bytes();
    answer.quantum = stream.device()->format().quantum;
    answer.device = endpoint_name(stream);
    const int fds[2] = {stream.ring.memfd(), stream.wake_fd.get()};
    const bool sent = reply(client, seq, answer, fds);
    stream.ring.close_memfd();
    return sent;
}

// A client may only command its own streams, on the connection that made them.
Stream* RequestHandler::own_stream(const ControlClient& client, uint32_t stream_id) const {
    Stream* stream = engine_.find_stream(stream_id);
    return stream != nullptr && stream->client_id == client.id ? stream : nullptr;
}

bool RequestHandler::reply_no_stream(ControlClient& client, uint32_t seq, uint32_t stream_id) {
    return reply_error(client, seq, AUDIOD_E_NOENTITY,
                       "no stream " + std::to_string(stream_id) + " on this connection");
}

bool RequestHandler::handle_stream_command(ControlClient& client, uint32_t seq, Body body) {
    proto::StreamCommand command;
    if (!proto::decode(body, command)) {
        reply_error(client, seq, AUDIOD_E_PROTOCOL, "malformed StreamCommand");
        return false;
    }
    Stream* stream = own_stream(client, command.stream_id);
    if (stream == nullptr) {
        return reply_no_stream(client, seq, command.stream_id);
    }
    MaybeError error;
    switch (static_cast<proto::StreamOp>(command.op)) {
    case proto::StreamOp::pause:
        error = engine_.set_paused(*stream, true);
        break;
    case proto::StreamOp::resume:
        error = engine_.set_paused(*stream, false);
        break;
    case proto::StreamOp::close:
        std::erase(client.streams, stream->id);
        engine_.close_stream(*stream);
        break;
    default:
        return reply_error(client, seq, AUDIOD_E_INVALID,
                           "unknown stream operation " + std::to_string(command.op));
    }
    if (error) {
        return reply_error(client, seq, error->code, error->message);
    }
    return reply(client, seq, proto::Ok{});
}

bool RequestHandler::handle_flush_stream(ControlClient& client, uint32_t seq, Body body) {
    proto::FlushStream request;
    if (!proto::decode(body, request)) {
        reply_error(client, seq, AUDIOD_E_PROTOCOL, "malformed FlushStream");
        return false;
    }
    Stream* stream = own_stream(client, request.stream_id);
    if (stream == nullptr) {
        return reply_no_stream(client, seq, request.stream_id);
    }
    if (const MaybeError error = engine_.flush(*stream, request.position)) {
        return reply_error(client, seq, error->code, error->message);
    }
    return reply(client, seq, proto::Ok{});
}

MaybeError RequestHandler::kill_client(const ControlClient& by, uint32_t client_id) {
    const auto it = clients_.find(client_id);
    if (it == clients_.end() || !it->second->greeted) {
        return ClientError{AUDIOD_E_NOENTITY, "no client " + std::to_string(client_id) +
                                                  " (see audioctl list clients)"};
    }
    ControlClient& target = *it->second;
    if (MaybeError denied = access_.check_client_owner(by, target)) {
        return denied;
    }
    // Its last word, so that libaudiod ends the client's streams with this
    // error instead of reconnecting as it would to a restarted server.
    reply_error(target, 0, AUDIOD_E_KILLED,
                "ended by client " + std::to_string(by.id) + " (" + by.app + ")");
    doomed_.push_back(client_id);
    log_info("control", "client " + std::to_string(client_id) + " (" + target.app +
                            ") ended by client " + std::to_string(by.id) + " (" + by.app + ")");
    return std::nullopt;
}

bool RequestHandler::handle_list_clients(ControlClient& client, uint32_t seq, Body body) {
    proto::ListClients request;
    if (!proto::decode(body, request)) {
        reply_error(client, seq, AUDIOD_E_PROTOCOL, "malformed message");
        return false;
    }
    proto::ClientList list;
    for (const auto& [id, other] : clients_) {
        if (access_.check_client_owner(client, *other)) {
            continue; // another user's, on a shared server
        }
        proto::ClientInfo info;
        info.id = id;
        info.pid = static_cast<uint32_t>(other->pid);
        info.executable = other->executable;
        info.app = other->app;
        for (const uint32_t stream_id : other->streams) {
            if (engine_.find_stream(stream_id) != nullptr) {
                info.streams.push_back(stream_id);
            }
        }
        list.clients.push_back(std::move(info));
    }
    return reply(client, seq, list);
}

} // namespace audiod
