#include "pulse/pulse_server.h"

#include "engine/engine.h"
#include "log.h"
#include "os/scheduling.h"

#include <cerrno>
#include <cstring>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <random>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>
#include <utility>
#include <variant>

namespace audiod::pulse {

namespace {

// recv() that keeps the descriptors passed with the bytes (a memfd pool:
// session.h); any beyond the few a message may carry are closed by the
// kernel (MSG_CTRUNC), and the connection then fails where one is missing.
ssize_t receive_with_fds(int socket, uint8_t* buffer, size_t size, std::vector<UniqueFd>& fds) {
    iovec io{buffer, size};
    alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int) * 4)];
    msghdr message{};
    message.msg_iov = &io;
    message.msg_iovlen = 1;
    message.msg_control = control;
    message.msg_controllen = sizeof control;
    const ssize_t n = ::recvmsg(socket, &message, MSG_CMSG_CLOEXEC);
    for (cmsghdr* c = CMSG_FIRSTHDR(&message); n >= 0 && c != nullptr;
         c = CMSG_NXTHDR(&message, c)) {
        if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS) {
            continue;
        }
        const size_t count = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
        for (size_t i = 0; i < count; ++i) {
            int fd = -1;
            std::memcpy(&fd, CMSG_DATA(c) + i * sizeof(int), sizeof fd);
            fds.emplace_back(fd);
        }
    }
    return n;
}

// Bytes read from one connection per wake-up, so that one busy client
// cannot starve the others.
constexpr size_t kReadPerTurn = 256u << 10;

} // namespace

PulseServer::PulseServer(EngineGateway& gateway)
    : gateway_(gateway)
    , epoll_(::epoll_create1(EPOLL_CLOEXEC))
    , stop_fd_(::eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC))
    , cookie_(std::random_device{}()) {}

PulseServer::~PulseServer() {
    stop();
}

Status PulseServer::start(UniqueFd listener) {
    listener_ = std::move(listener);
    const auto watch = [&](int fd, uint64_t tag) {
        epoll_event ev{};
        ev.events = EPOLLIN;
        ev.data.u64 = tag;
        return ::epoll_ctl(epoll_.get(), EPOLL_CTL_ADD, fd, &ev) == 0;
    };
    if (!epoll_ || !stop_fd_ || !watch(listener_.get(), tag_of(Source::listener, 0)) ||
        (tcp_listener_ && !watch(tcp_listener_.get(), tag_of(Source::listener, kTcpListener))) ||
        !watch(stop_fd_.get(), tag_of(Source::stop, 0)) ||
        !watch(gateway_.answers_fd(), tag_of(Source::answers, 0))) {
        return Status::failure(std::string("pulse server: ") + std::strerror(errno));
    }
    // Engine events come only while this thread runs to take them: a
    // server that does not serve pulse clients must not queue them up.
    gateway_.set_event_handler([this](const proto::Event& event) { on_engine_event(event); });
    // The devices there are numbered first, in the engine's order, so that
    // the indices read as audioctl lists them.
    gateway_.post([this](Engine& engine) {
        auto snapshot = std::make_shared<EngineSnapshot>();
        snapshot->sinks = engine.list_sinks();
        snapshot->sources = engine.list_sources();
        return EngineGateway::Answer(
            [this, snapshot] { number(*snapshot, sink_indices_, source_indices_); });
    });
    try {
        thread_ = std::thread([this] { run(); });
    } catch (const std::system_error& e) {
        gateway_.set_event_handler({});
        return Status::failure(std::string("pulse server: no thread: ") + e.what());
    }
    return Status::success();
}

void PulseServer::stop() {
    if (!thread_.joinable()) {
        return;
    }
    const uint64_t one = 1;
    [[maybe_unused]] const ssize_t r = ::write(stop_fd_.get(), &one, sizeof one);
    thread_.join();
    gateway_.set_event_handler({});
    connections_.clear();
}

void PulseServer::run() noexcept {
    // In the audio path of every libpulse stream (their audio crosses this
    // thread into the rings), so raised as far as a nice level goes: never
    // SCHED_FIFO, as it allocates and does socket I/O for any client. On a
    // loaded machine at the default level it was held up long enough for
    // players with a second queued to run dry.
    log_debug("pulse", "thread scheduling=\"" + raise_current_thread_priority(0) + "\"");
    epoll_event events[32];
    for (;;) {
        const int n = ::epoll_wait(epoll_.get(), events, std::size(events), next_timeout_ms());
        if (n < 0 && errno != EINTR) {
            log_error("pulse", std::string("epoll_wait: ") + std::strerror(errno));
            return;
        }
        for (int i = 0; i < n; ++i) {
            const auto source = static_cast<Source>(events[i].data.u64 >> 32);
            const auto id = static_cast<uint32_t>(events[i].data.u64);
            switch (source) {
            case Source::listener:
                accept_connections(id == kTcpListener);
                break;
            case Source::stop:
                return;
            case Source::answers:
                gateway_.run_answers();
                break;
            case Source::connection:
                if (const Connection* c = find(id);
                    c != nullptr && c->read_paused &&
                    (events[i].events & (EPOLLHUP | EPOLLERR)) != 0) {
                    // Gone while held back: epoll reports that whatever it
                    // is asked for, and would report it till the answers came.
                    drop(id, "");
                    break;
                }
                if ((events[i].events & EPOLLOUT) != 0) {
                    on_writable(id);
                }
                if ((events[i].events & (EPOLLIN | EPOLLHUP | EPOLLERR)) != 0) {
                    on_readable(id);
                }
                break;
            case Source::stream:
                on_stream_wake(id);
                break;
            }
        }
        service_drains();
        for (const uint32_t doomed : std::exchange(doomed_, {})) {
            drop(doomed, "killed by another client (KILL_CLIENT)");
        }
        drop_late_handshakes();
    }
}

void PulseServer::accept_connections(bool tcp) {
    for (;;) {
        UniqueFd fd(::accept4((tcp ? tcp_listener_ : listener_).get(), nullptr, nullptr,
                              SOCK_NONBLOCK | SOCK_CLOEXEC));
        if (!fd) {
            if (errno != EAGAIN && errno != EINTR && errno != ECONNABORTED) {
                log_warning("pulse", std::string("accept: ") + std::strerror(errno));
            }
            return;
        }
        if (connections_.size() >= kMaxConnections) {
            log_warning("pulse", "refusing a client: too many connections");
            continue;
        }
        auto connection = std::make_unique<Connection>();
        connection->id = next_id_++;
        connection->fd = std::move(fd);
        connection->since = std::chrono::steady_clock::now();
        ucred cred{};
        socklen_t len = sizeof cred;
        if (tcp) {
            // A TCP peer has no uid to check: it proves itself with the
            // cookie, and its audio comes through the socket.
            const int yes = 1;
            ::setsockopt(connection->fd.get(), IPPROTO_TCP, TCP_NODELAY, &yes, sizeof yes);
            connection->uid = static_cast<uid_t>(-1);
        } else if (::getsockopt(connection->fd.get(), SOL_SOCKET, SO_PEERCRED, &cred, &len) == 0) {
            connection->uid = cred.uid;
            connection->pid = cred.pid;
        }
        connection->admin = is_admin(policy_, connection->fd.get(), connection->uid);
        // Shared memory with a client of our own uid only: a pool is
        // the client's memory, mapped into ours.
        connection->session = std::make_unique<Session>(
            connection->id, *this, !tcp && shared_memory_ && connection->uid == ::geteuid());
        if (tcp) {
            connection->session->require_cookie(tcp_cookie_);
        }
        epoll_event ev{};
        ev.events = EPOLLIN;
        ev.data.u64 = tag_of(Source::connection, connection->id);
        if (::epoll_ctl(epoll_.get(), EPOLL_CTL_ADD, connection->fd.get(), &ev) != 0) {
            continue;
        }
        log_debug("pulse", "client connected id=" + std::to_string(connection->id) +
                               " pid=" + std::to_string(connection->pid));
        connections_.emplace(connection->id, std::move(connection));
    }
}

PulseServer::Connection* PulseServer::find(uint32_t id) {
    const auto it = connections_.find(id);
    return it == connections_.end() ? nullptr : it->second.get();
}

PulseServer::Connection* PulseServer::owner_of(const Session& session) {
    return find(session.client_index());
}

void PulseServer::on_readable(uint32_t id) {
    Connection* connection = find(id);
    if (connection == nullptr) {
        return;
    }
    uint8_t buffer[16384];
    size_t taken = 0;
    while (taken < kReadPerTurn) {
        if (connection->pending_jobs >= kMaxPendingJobs) {
            // Read again once the engine has answered what it asked.
            connection->read_paused = true;
            update_interest(*connection);
            break;
        }
        std::vector<UniqueFd> fds;
        const ssize_t n = receive_with_fds(connection->fd.get(), buffer, sizeof buffer, fds);
        if (n == 0) {
            drop(id, "");
            return;
        }
        if (n < 0) {
            if (errno == EAGAIN || errno == EINTR) {
                break;
            }
            drop(id, errno == ECONNRESET ? "" : std::string("recv: ") + std::strerror(errno));
            return;
        }
        taken += static_cast<size_t>(n);
        handling_ = id;
        const bool ok =
            connection->session->receive({buffer, static_cast<size_t>(n)}, std::move(fds));
        handling_ = 0;
        if (!connection->announced && connection->session->named()) {
            // Told to every subscriber, this one too if it subscribed in
            // the same read: a send that fails there drops it.
            announce_client(*connection, Happened::added);
            if (find(id) == nullptr) {
                return;
            }
        }
        if (!flush(*connection) || !ok) {
            drop(id, connection->session->error());
            return;
        }
    }
}

void PulseServer::on_writable(uint32_t id) {
    if (Connection* connection = find(id); connection != nullptr && !flush(*connection)) {
        drop(id, "");
        return;
    }
    // The socket took what waited: held events and record streams may
    // send again.
    with_connection(id, [&](Connection& connection) {
        release_held_events(connection);
        pump_records(connection);
    });
}

bool PulseServer::flush(Connection& connection) {
    std::vector<uint8_t> more = connection.session->take_output();
    if (!more.empty()) {
        if (connection.sent > 0) {
            connection.queued.erase(connection.queued.begin(),
                                    connection.queued.begin() +
                                        static_cast<std::ptrdiff_t>(connection.sent));
            connection.sent = 0;
        }
        connection.queued.insert(connection.queued.end(), more.begin(), more.end());
    }
    while (connection.sent < connection.queued.size()) {
        const ssize_t n =
            ::send(connection.fd.get(), connection.queued.data() + connection.sent,
                   connection.queued.size() - connection.sent, MSG_NOSIGNAL | MSG_DONTWAIT);
        if (n < 0) {
            if (errno == EAGAIN || errno == EINTR) {
                break;
            }
            return false;
        }
        connection.sent += static_cast<size_t>(n);
    }
    const size_t left = connection.queued.size() - connection.sent;
    if (left == 0) {
        connection.queued.clear();
        connection.sent = 0;
    }
    if (left > kMaxQueuedBytes) {
        log_warning("pulse", "client " + std::to_string(connection.id) +
                                 " does not read what it "
                                 "is sent; dropping it");
        return false;
    }
    // Asked to be told when the socket takes more only while something waits.
    if ((left > 0) != connection.writing) {
        connection.writing = left > 0;
        update_interest(connection);
    }
    return true;
}

void PulseServer::update_interest(Connection& connection) {
    epoll_event ev{};
    ev.events = (connection.read_paused ? 0u : EPOLLIN) | (connection.writing ? EPOLLOUT : 0u);
    ev.data.u64 = tag_of(Source::connection, connection.id);
    ::epoll_ctl(epoll_.get(), EPOLL_CTL_MOD, connection.fd.get(), &ev);
}

void PulseServer::post_job(EngineGateway::Job job) {
    const uint32_t owner = handling_;
    if (Connection* connection = find(owner)) {
        ++connection->pending_jobs;
    }
    gateway_.post([this, owner, job = std::move(job)](Engine& engine) -> EngineGateway::Answer {
        EngineGateway::Answer answer = job(engine);
        return [this, owner, answer = std::move(answer)] {
            if (answer) {
                answer();
            }
            job_answered(owner);
        };
    });
}

void PulseServer::job_answered(uint32_t id) {
    Connection* connection = find(id);
    if (connection == nullptr || connection->pending_jobs == 0) {
        return;
    }
    --connection->pending_jobs;
    if (connection->read_paused && connection->pending_jobs <= kMaxPendingJobs / 2) {
        connection->read_paused = false;
        update_interest(*connection);
    }
}

void PulseServer::drop(uint32_t id, const std::string& reason) {
    Connection* connection = find(id);
    if (connection == nullptr) {
        return;
    }
    ::epoll_ctl(epoll_.get(), EPOLL_CTL_DEL, connection->fd.get(), nullptr);
    while (!connection->playbacks.empty()) {
        close_playback(*connection, connection->playbacks.begin()->first);
    }
    while (!connection->records.empty()) {
        close_record(*connection, connection->records.begin()->first);
    }
    if (connection->announced) {
        announce_client(*connection, Happened::removed);
    }
    log_message(reason.empty() ? LogLevel::debug : LogLevel::warning, "pulse",
                "client gone id=" + std::to_string(id) +
                    (reason.empty() ? "" : " reason=\"" + reason + "\""));
    connections_.erase(id);
}

void PulseServer::drop_late_handshakes() {
    const auto now = std::chrono::steady_clock::now();
    std::vector<uint32_t> late;
    for (const auto& [id, connection] : connections_) {
        if (!connection->session->named() && now - connection->since > kAuthDeadline) {
            late.push_back(id);
        }
    }
    for (const uint32_t id : late) {
        drop(id, "no handshake within " + std::to_string(kAuthDeadline.count()) + " s");
    }
}

void PulseServer::with_connection(uint32_t id, const std::function<void(Connection&)>& answer) {
    Connection* connection = find(id);
    if (connection == nullptr) {
        return; // gone while the engine worked
    }
    answer(*connection);
    if (!flush(*connection)) {
        drop(id, "");
    }
}

std::string PulseServer::engine_app(const Connection& connection) const {
    return app_of(policy_, caller_of(connection), declared_app(connection));
}

std::string PulseServer::declared_app(const Connection& connection) {
    const PropertyList& properties = connection.session->client_properties();
    for (const char* key : {"application.name", "application.process.binary"}) {
        if (auto name = property_string(properties, key); name && !name->empty()) {
            return *name;
        }
    }
    return "pulse-client";
}

bool PulseServer::on_command(Session& session, Command command, uint32_t tag, TagReader& fields) {
    const uint32_t id = session.client_index();
    Connection* connection = find(id);
    if (connection != nullptr && (on_playback_command(*connection, command, tag, fields) ||
                                  on_record_command(*connection, command, tag, fields))) {
        return true;
    }
    return connection != nullptr && (on_introspection_command(*connection, command, tag, fields) ||
                                     on_control_command(*connection, command, tag, fields) ||
                                     on_subscribe_command(*connection, command, tag, fields) ||
                                     on_module_command(*connection, command, tag, fields) ||
                                     on_extension_command(*connection, command, tag, fields) ||
                                     on_sample_command(*connection, command, tag, fields));
}

} // namespace audiod::pulse
