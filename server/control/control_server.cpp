#include "control_server.h"

#include "audiod/audiod.h"
#include "log.h"
#include "version.h"

#include <cerrno>
#include <csignal>
#include <cstring>
#include <fcntl.h>
#include <fstream>
#include <sys/epoll.h>
#include <sys/signalfd.h>
#include <sys/socket.h>

namespace audiod {

namespace {

enum class Source : uint32_t { listener = 1, signal = 2, sink_events = 3, client = 4 };

constexpr size_t kMaxClients = 256;
constexpr int kHousekeepingMs = 200;
// Packets taken from one client per wake-up, so one chatty client cannot
// starve the others.
constexpr int kPacketsPerTurn = 32;

uint64_t tag(Source source, uint32_t id) {
    return (uint64_t{static_cast<uint32_t>(source)} << 32) | id;
}

std::string read_comm(pid_t pid) {
    std::ifstream in("/proc/" + std::to_string(pid) + "/comm");
    std::string name;
    std::getline(in, name);
    return name;
}

// Names come from clients: keep them printable and short.
std::string sanitize_name(const std::string& raw) {
    std::string out;
    for (const char c : raw) {
        if (out.size() >= 64) {
            break;
        }
        out += static_cast<unsigned char>(c) < 0x20 || c == 0x7f ? '?' : c;
    }
    return out;
}

} // namespace

ControlServer::ControlServer(Engine& engine, UniqueFd listener)
    : engine_(engine)
    , listener_(std::move(listener)) {
    engine_.on_client_fault = [this](uint32_t client, const std::string& reason) {
        doomed_.push_back(client);
        log_warning("control", "dropping client " + std::to_string(client) + ": " + reason);
    };
}

ControlServer::~ControlServer() {
    engine_.on_client_fault = nullptr;
    while (!clients_.empty()) {
        drop_client(clients_.begin()->first, "server stopping");
    }
}

std::string ControlServer::run() {
    epoll_.reset(::epoll_create1(EPOLL_CLOEXEC));
    if (!epoll_) {
        return std::string("epoll_create1: ") + std::strerror(errno);
    }
    sigset_t mask;
    sigemptyset(&mask);
    sigaddset(&mask, SIGINT);
    sigaddset(&mask, SIGTERM);
    signals_.reset(::signalfd(-1, &mask, SFD_NONBLOCK | SFD_CLOEXEC));
    if (!signals_) {
        return std::string("signalfd: ") + std::strerror(errno);
    }
    const auto watch = [&](int fd, uint64_t data) {
        epoll_event ev{};
        ev.events = EPOLLIN;
        ev.data.u64 = data;
        return ::epoll_ctl(epoll_.get(), EPOLL_CTL_ADD, fd, &ev) == 0;
    };
    bool ok = watch(listener_.get(), tag(Source::listener, 0)) &&
              watch(signals_.get(), tag(Source::signal, 0));
    for (const int fd : engine_.event_fds()) {
        ok = ok && watch(fd, tag(Source::sink_events, static_cast<uint32_t>(fd)));
    }
    if (!ok) {
        return std::string("epoll_ctl: ") + std::strerror(errno);
    }

    epoll_event events[32];
    for (;;) {
        const int n = ::epoll_wait(epoll_.get(), events, std::size(events), kHousekeepingMs);
        if (n < 0 && errno != EINTR) {
            return std::string("epoll_wait: ") + std::strerror(errno);
        }
        for (int i = 0; i < n; ++i) {
            const auto source = static_cast<Source>(events[i].data.u64 >> 32);
            const auto id = static_cast<uint32_t>(events[i].data.u64);
            switch (source) {
            case Source::listener:
                accept_clients();
                break;
            case Source::signal: {
                signalfd_siginfo info{};
                if (::read(signals_.get(), &info, sizeof info) == sizeof info) {
                    log_info("control", std::string("stopping on ") + strsignal(info.ssi_signo));
                    return {};
                }
                break;
            }
            case Source::sink_events:
                engine_.handle_events(static_cast<int>(id));
                break;
            case Source::client:
                on_client_readable(id);
                break;
            }
            for (const uint32_t doomed : std::exchange(doomed_, {})) {
                drop_client(doomed, "");
            }
        }
        engine_.retry_pending();
    }
}

void ControlServer::accept_clients() {
    for (;;) {
        UniqueFd fd(::accept4(listener_.get(), nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC));
        if (!fd) {
            if (errno != EAGAIN && errno != EINTR && errno != ECONNABORTED) {
                log_warning("control", std::string("accept: ") + std::strerror(errno));
            }
            return;
        }
        if (clients_.size() >= kMaxClients) {
            log_warning("control", "refusing a client: too many clients");
            continue;
        }
        auto client = std::make_unique<Client>();
        client->id = next_client_id_++;
        client->fd = std::move(fd);
        ucred cred{};
        socklen_t len = sizeof cred;
        if (::getsockopt(client->fd.get(), SOL_SOCKET, SO_PEERCRED, &cred, &len) == 0) {
            client->pid = cred.pid;
            client->uid = cred.uid;
            client->executable = sanitize_name(read_comm(cred.pid));
        }
        epoll_event ev{};
        ev.events = EPOLLIN;
        ev.data.u64 = tag(Source::client, client->id);
        if (::epoll_ctl(epoll_.get(), EPOLL_CTL_ADD, client->fd.get(), &ev) != 0) {
            log_warning("control", std::string("epoll_ctl: ") + std::strerror(errno));
            continue;
        }
        log_debug("control", "client connected id=" + std::to_string(client->id) + " pid=" +
                                 std::to_string(client->pid) + " exe=" + client->executable);
        clients_.emplace(client->id, std::move(client));
    }
}

void ControlServer::on_client_readable(uint32_t client_id) {
    const auto it = clients_.find(client_id);
    if (it == clients_.end()) {
        return;
    }
    Client& client = *it->second;
    proto::Packet packet;
    for (int i = 0; i < kPacketsPerTurn; ++i) {
        const int rc = proto::recv_packet(client.fd.get(), packet);
        if (rc == -EAGAIN) {
            return;
        }
        if (rc == -ECONNRESET) {
            drop_client(client_id, "");
            return;
        }
        if (rc != 0) {
            drop_client(client_id, std::string("receive failed: ") + std::strerror(-rc));
            return;
        }
        if (!handle_packet(client, packet)) {
            drop_client(client_id, "");
            return;
        }
    }
}

void ControlServer::drop_client(uint32_t client_id, const std::string& reason) {
    const auto it = clients_.find(client_id);
    if (it == clients_.end()) {
        return;
    }
    Client& client = *it->second;
    for (const uint32_t stream_id : client.streams) {
        if (Stream* stream = engine_.find_stream(stream_id)) {
            engine_.close_stream(*stream);
        }
    }
    ::epoll_ctl(epoll_.get(), EPOLL_CTL_DEL, client.fd.get(), nullptr);
    log_message(reason.empty() ? LogLevel::debug : LogLevel::warning, "control",
                "client gone id=" + std::to_string(client_id) + " app=" + client.app +
                    (reason.empty() ? "" : " reason=\"" + reason + "\""));
    clients_.erase(it);
}

template <class M>
bool ControlServer::reply(Client& client, uint32_t seq, const M& message,
                          std::span<const int> fds) {
    const auto bytes = proto::encode(seq, message);
    const int rc = proto::send_packet(client.fd.get(), bytes, fds);
    if (rc != 0) {
        // A client that does not read its replies has filled its socket;
        // waiting for it would stall everyone, so it goes.
        log_warning("control", "client " + std::to_string(client.id) +
                                   " cannot take a reply: " + std::strerror(-rc));
        return false;
    }
    return true;
}

bool ControlServer::reply_error(Client& client, uint32_t seq, int code,
                                const std::string& message) {
    proto::Error error;
    error.code = code;
    error.message = message;
    return reply(client, seq, error);
}

bool ControlServer::handle_packet(Client& client, const proto::Packet& packet) {
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
    const auto body = envelope->body;
    if (!client.greeted && envelope->type != proto::MsgType::hello) {
        reply_error(client, seq, AUDIOD_E_PROTOCOL, "the first message must be Hello");
        return false;
    }
    const auto decode_or_fail = [&](auto& message) {
        if (proto::decode(body, message)) {
            return true;
        }
        reply_error(client, seq, AUDIOD_E_PROTOCOL, "malformed message");
        return false;
    };
    switch (envelope->type) {
    case proto::MsgType::hello:
        return handle_hello(client, seq, body);
    case proto::MsgType::create_stream:
        return handle_create_stream(client, seq, body);
    case proto::MsgType::stream_command:
        return handle_stream_command(client, seq, body);
    case proto::MsgType::set_volume:
        return handle_set_volume(client, seq, body);
    case proto::MsgType::list_sinks: {
        proto::ListSinks request;
        if (!decode_or_fail(request)) {
            return false;
        }
        proto::SinkList list;
        list.sinks = engine_.list_sinks();
        return reply(client, seq, list);
    }
    case proto::MsgType::list_streams: {
        proto::ListStreams request;
        if (!decode_or_fail(request)) {
            return false;
        }
        proto::StreamList list;
        list.streams = engine_.list_streams();
        if (list.streams.size() > proto::kMaxListItems) {
            list.streams.resize(proto::kMaxListItems);
        }
        return reply(client, seq, list);
    }
    case proto::MsgType::get_info: {
        proto::GetInfo request;
        if (!decode_or_fail(request)) {
            return false;
        }
        proto::ServerInfo info = engine_.info();
        info.clients = static_cast<uint32_t>(clients_.size());
        return reply(client, seq, info);
    }
    default:
        reply_error(client, seq, AUDIOD_E_PROTOCOL,
                    "unknown message type " +
                        std::to_string(static_cast<uint32_t>(envelope->type)));
        return false;
    }
}

bool ControlServer::handle_hello(Client& client, uint32_t seq, std::span<const uint8_t> body) {
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

bool ControlServer::handle_create_stream(Client& client, uint32_t seq,
                                         std::span<const uint8_t> body) {
    StreamRequest request;
    if (!proto::decode(body, request.params)) {
        reply_error(client, seq, AUDIOD_E_PROTOCOL, "malformed CreateStream");
        return false;
    }
    request.client_id = client.id;
    request.pid = static_cast<uint32_t>(client.pid);
    request.app = client.app;
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
    answer.quantum = stream.sink->format().quantum;
    answer.sink = stream.sink->name();
    const int fds[2] = {stream.ring.memfd(), stream.wake_fd.get()};
    const bool sent = reply(client, seq, answer, fds);
    stream.ring.close_memfd();
    return sent;
}

bool ControlServer::handle_stream_command(Client& client, uint32_t seq,
                                          std::span<const uint8_t> body) {
    proto::StreamCommand command;
    if (!proto::decode(body, command)) {
        reply_error(client, seq, AUDIOD_E_PROTOCOL, "malformed StreamCommand");
        return false;
    }
    Stream* stream = engine_.find_stream(command.stream_id);
    // A client may only command its own streams.
    if (stream == nullptr || stream->client_id != client.id) {
        return reply_error(client, seq, AUDIOD_E_NOENTITY,
                           "no stream " + std::to_string(command.stream_id) +
                               " on this connection");
    }
    std::optional<ClientError> error;
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

bool ControlServer::handle_set_volume(Client& client, uint32_t seq, std::span<const uint8_t> body) {
    proto::SetVolume request;
    if (!proto::decode(body, request)) {
        reply_error(client, seq, AUDIOD_E_PROTOCOL, "malformed SetVolume");
        return false;
    }
    if (const auto error = engine_.set_volume(request)) {
        return reply_error(client, seq, error->code, error->message);
    }
    return reply(client, seq, proto::Ok{});
}

} // namespace audiod
