#include "control/control_server.h"

#include "control/client_name.h"

#include "audiod/audiod.h"
#include "log.h"

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

enum class Source : uint32_t { listener = 1, signal = 2, sink_events = 3, client = 4, gateway = 5 };

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

} // namespace

ControlServer::ControlServer(Engine& engine)
    : engine_(engine)
    , access_(engine, clients_, policy_)
    , requests_(engine, clients_, access_, doomed_) {
    epoll_.reset(::epoll_create1(EPOLL_CLOEXEC));
    engine_.set_observer(this);
}

ControlServer::~ControlServer() {
    while (!clients_.empty()) {
        drop_client(clients_.begin()->first, "");
    }
    engine_.set_observer(nullptr);
}

bool ControlServer::watch(int fd, uint64_t data) {
    epoll_event ev{};
    ev.events = EPOLLIN;
    ev.data.u64 = data;
    return ::epoll_ctl(epoll_.get(), EPOLL_CTL_ADD, fd, &ev) == 0;
}

void ControlServer::on_device_opened(Device& sink) {
    if (!watch(sink.event_fd(), tag(Source::sink_events, static_cast<uint32_t>(sink.event_fd())))) {
        log_error("control", std::string("cannot watch a sink: ") + std::strerror(errno));
    }
}

void ControlServer::on_device_closing(Device& sink) {
    ::epoll_ctl(epoll_.get(), EPOLL_CTL_DEL, sink.event_fd(), nullptr);
}

void ControlServer::on_client_fault(uint32_t client_id, const std::string& reason) {
    doomed_.push_back(client_id);
    log_warning("control", "dropping client " + std::to_string(client_id) + ": " + reason);
}

void ControlServer::on_event(const proto::Event& event) {
    if (gateway_ != nullptr) {
        gateway_->publish(event); // for the pulse server's subscribers
    }
    const auto bytes = proto::encode(0, event);
    for (auto& [id, client] : clients_) {
        if (!client->subscribed) {
            continue;
        }
        proto::Event seen = event;
        if (policy_.per_user && !access_.show_event(*client, seen)) {
            continue;
        }
        const auto& sent = policy_.per_user ? proto::encode(0, seen) : bytes;
        if (proto::send_packet(client->fd.get(), sent) != 0) {
            // A watcher that does not read its events would make us buffer
            // without bound; it goes instead.
            doomed_.push_back(id);
        }
    }
}

Status ControlServer::run(UniqueFd listener) {
    listener_ = std::move(listener);
    if (!epoll_) {
        return Status::failure(std::string("epoll_create1: ") + std::strerror(errno));
    }
    sigset_t mask;
    sigemptyset(&mask);
    sigaddset(&mask, SIGINT);
    sigaddset(&mask, SIGTERM);
    sigaddset(&mask, SIGHUP);
    signals_.reset(::signalfd(-1, &mask, SFD_NONBLOCK | SFD_CLOEXEC));
    if (!signals_) {
        return Status::failure(std::string("signalfd: ") + std::strerror(errno));
    }
    if (!watch(listener_.get(), tag(Source::listener, 0)) ||
        !watch(signals_.get(), tag(Source::signal, 0)) ||
        (gateway_ != nullptr && !watch(gateway_->jobs_fd(), tag(Source::gateway, 0)))) {
        return Status::failure(std::string("epoll_ctl: ") + std::strerror(errno));
    }

    epoll_event events[32];
    for (;;) {
        const int n = ::epoll_wait(epoll_.get(), events, std::size(events), kHousekeepingMs);
        if (n < 0 && errno != EINTR) {
            return Status::failure(std::string("epoll_wait: ") + std::strerror(errno));
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
                if (::read(signals_.get(), &info, sizeof info) != sizeof info) {
                    break;
                }
                if (info.ssi_signo == SIGHUP) {
                    log_info("control", "reloading the configuration on SIGHUP");
                    if (!requests_.reloader()) {
                        log_warning("control", "this server cannot reload");
                    } else if (auto reloaded = requests_.reloader()();
                               const auto* refused = std::get_if<ClientError>(&reloaded)) {
                        log_error("control", "configuration refused, the running one stays: " +
                                                 refused->message);
                    }
                    break;
                }
                log_info("control", std::string("stopping on ") + strsignal(info.ssi_signo));
                return Status::success();
                break;
            }
            case Source::sink_events:
                engine_.handle_events(static_cast<int>(id));
                break;
            case Source::client:
                on_client_readable(id);
                break;
            case Source::gateway:
                gateway_->run_jobs(engine_);
                break;
            }
            for (const uint32_t doomed : std::exchange(doomed_, {})) {
                drop_client(doomed, "");
            }
        }
        engine_.tick();
        for (const uint32_t doomed : std::exchange(doomed_, {})) {
            drop_client(doomed, "");
        }
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
        auto client = std::make_unique<ControlClient>();
        client->id = next_client_id_++;
        client->fd = std::move(fd);
        ucred cred{};
        socklen_t len = sizeof cred;
        if (::getsockopt(client->fd.get(), SOL_SOCKET, SO_PEERCRED, &cred, &len) == 0) {
            client->pid = cred.pid;
            client->uid = cred.uid;
            client->executable = sanitize_name(read_comm(cred.pid));
            client->admin = is_admin(policy_, client->fd.get(), cred.uid);
        } else {
            client->admin = !policy_.per_user; // unknown: trusted only by a per-user server
            client->uid = static_cast<uid_t>(-1);
        }
        if (!watch(client->fd.get(), tag(Source::client, client->id))) {
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
    ControlClient& client = *it->second;
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
        if (!requests_.handle(client, packet)) {
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
    ControlClient& client = *it->second;
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

} // namespace audiod
