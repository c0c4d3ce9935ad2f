#include "service/socket_activation.h"

#include "common/status.h"

#include <cerrno>
#include <charconv>
#include <cstddef>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

namespace audiod {
namespace {

constexpr int kFirstPassedFd = 3; // SD_LISTEN_FDS_START

std::optional<long> parse_number(const char* text) {
    if (text == nullptr || *text == '\0') {
        return std::nullopt;
    }
    long value = 0;
    const char* end = text + std::strlen(text);
    const auto [ptr, ec] = std::from_chars(text, end, value);
    if (ec != std::errc() || ptr != end || value < 0) {
        return std::nullopt;
    }
    return value;
}

// Checks the one thing every later step relies on: a listening Unix
// socket bound to a path, which it stores in `path`, with its type in
// `type`.
Status check_listener(int fd, std::string& path, int& type) {
    socklen_t length = sizeof type;
    if (::getsockopt(fd, SOL_SOCKET, SO_TYPE, &type, &length) != 0) {
        return Status::failure("descriptor " + std::to_string(fd) +
                               " is not a socket: " + std::string(std::strerror(errno)));
    }
    sockaddr_un address{};
    socklen_t address_length = sizeof address;
    if (::getsockname(fd, reinterpret_cast<sockaddr*>(&address), &address_length) != 0 ||
        address.sun_family != AF_UNIX) {
        return Status::failure("the passed socket is not a Unix socket");
    }
    if (type != SOCK_SEQPACKET && type != SOCK_STREAM) {
        return Status::failure("a passed socket is neither SOCK_SEQPACKET (audiod's) nor "
                               "SOCK_STREAM (the pulse socket)");
    }
    int listening = 0;
    length = sizeof listening;
    if (::getsockopt(fd, SOL_SOCKET, SO_ACCEPTCONN, &listening, &length) != 0 || listening == 0) {
        return Status::failure("the passed socket is not listening");
    }
    const size_t path_bytes = address_length > offsetof(sockaddr_un, sun_path)
                                  ? address_length - offsetof(sockaddr_un, sun_path)
                                  : 0;
    path.assign(address.sun_path, ::strnlen(address.sun_path, path_bytes));
    if (path.empty()) {
        return Status::failure("the passed socket has no path (abstract or unbound)");
    }
    return Status::success();
}

} // namespace

std::variant<std::nullopt_t, ActivatedSocket, std::string> take_activated_socket() {
    const std::optional<long> pid = parse_number(std::getenv("LISTEN_PID"));
    const std::optional<long> count = parse_number(std::getenv("LISTEN_FDS"));
    const bool for_us = pid && count && *pid == ::getpid();
    ::unsetenv("LISTEN_PID");
    ::unsetenv("LISTEN_FDS");
    ::unsetenv("LISTEN_FDNAMES");
    if (!for_us || *count == 0) {
        return std::nullopt;
    }
    if (*count > 2) {
        return "systemd passed " + std::to_string(*count) +
               " sockets; audiod serves two at the most (audiod.socket and audiod-pulse.socket)";
    }
    ActivatedSocket activated;
    bool control = false;
    for (int fd = kFirstPassedFd; fd < kFirstPassedFd + *count; ++fd) {
        std::string path;
        int type = 0;
        if (const Status checked = check_listener(fd, path, type); !checked.ok()) {
            return checked.reason();
        }
        const int flags = ::fcntl(fd, F_GETFL);
        if (flags < 0 || ::fcntl(fd, F_SETFL, flags | O_NONBLOCK) != 0 ||
            ::fcntl(fd, F_SETFD, FD_CLOEXEC) != 0) {
            return "cannot set up the passed socket: " + std::string(std::strerror(errno));
        }
        if (type == SOCK_SEQPACKET && !control) {
            control = true;
            activated.fd = UniqueFd(fd);
            activated.path = std::move(path);
        } else if (type == SOCK_STREAM && !activated.pulse_fd) {
            activated.pulse_fd = UniqueFd(fd);
            activated.pulse_path = std::move(path);
        } else {
            return "systemd passed two sockets of one kind; audiod serves one SOCK_SEQPACKET "
                   "socket (audiod.socket) and at most one SOCK_STREAM socket "
                   "(audiod-pulse.socket)";
        }
    }
    if (!control) {
        return "the passed socket is not SOCK_SEQPACKET (audiod.socket needs "
               "ListenSequentialPacket=, not ListenStream=)";
    }
    return activated;
}

} // namespace audiod
