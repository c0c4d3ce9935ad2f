#include "pulse/pulse_socket.h"

#include "log.h"
#include "pulse/pulse_server.h"

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

namespace audiod::pulse {

std::string default_pulse_socket() {
    const char* runtime = std::getenv("XDG_RUNTIME_DIR");
    return runtime != nullptr && *runtime == '/' ? std::string(runtime) + "/pulse/native" : "";
}

std::variant<UniqueFd, std::string> listen_for_pulse(const std::string& path,
                                                     const std::optional<SocketGroup>& group) {
    sockaddr_un address{};
    if (path.empty() || path.size() >= sizeof address.sun_path) {
        return "the pulse socket path '" + path + "' is empty or too long";
    }
    const std::string folder = path.substr(0, path.rfind('/'));
    if (!folder.empty() && ::mkdir(folder.c_str(), group ? 0755 : 0700) != 0 && errno != EEXIST) {
        return "cannot make " + folder + ": " + std::strerror(errno);
    }
    address.sun_family = AF_UNIX;
    std::memcpy(address.sun_path, path.c_str(), path.size() + 1);
    // Someone answering there is a live server: it stays.
    {
        UniqueFd probe(::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0));
        if (probe && ::connect(probe.get(), reinterpret_cast<const sockaddr*>(&address),
                               sizeof address) == 0) {
            return "a PulseAudio server (PulseAudio or pipewire-pulse) already serves " + path +
                   "; audiod leaves it alone";
        }
        if (errno == ECONNREFUSED) {
            ::unlink(path.c_str()); // a socket its server left behind
        }
    }
    UniqueFd fd(::socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0));
    if (!fd) {
        return std::string("socket: ") + std::strerror(errno);
    }
    if (::bind(fd.get(), reinterpret_cast<const sockaddr*>(&address), sizeof address) != 0) {
        return "cannot bind " + path + ": " + std::strerror(errno);
    }
    // Its final access before it listens: no client finds it in between.
    if (std::string why = set_socket_access(path, group); !why.empty()) {
        return why;
    }
    if (::listen(fd.get(), 64) != 0) {
        ::unlink(path.c_str());
        return "cannot listen on " + path + ": " + std::strerror(errno);
    }
    return fd;
}

bool start_pulse_server(PulseServer& server, const std::string& path,
                        const std::optional<SocketGroup>& group) {
    if (path.empty()) {
        log_info("pulse", "no $XDG_RUNTIME_DIR and no [pulse] socket: pulse clients not served");
        return false;
    }
    auto listening = listen_for_pulse(path, group);
    if (const auto* why = std::get_if<std::string>(&listening)) {
        log_warning("pulse", *why);
        return false;
    }
    if (const Status started = server.start(std::move(std::get<UniqueFd>(listening)));
        !started.ok()) {
        log_error("pulse", started.reason());
        ::unlink(path.c_str());
        return false;
    }
    log_info("pulse", "listening socket=" + path);
    return true;
}

std::variant<UniqueFd, std::string> listen_tcp_for_pulse(const std::string& where) {
    const size_t colon = where.rfind(':');
    std::string host = colon == std::string::npos ? "127.0.0.1" : where.substr(0, colon);
    const std::string port = colon == std::string::npos ? where : where.substr(colon + 1);
    if (host.size() > 2 && host.front() == '[' && host.back() == ']') {
        host = host.substr(1, host.size() - 2);
    }
    addrinfo hints{};
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    hints.ai_flags = AI_PASSIVE | AI_NUMERICSERV;
    addrinfo* found = nullptr;
    if (const int failed = ::getaddrinfo(host.c_str(), port.c_str(), &hints, &found); failed != 0) {
        return "cannot listen on TCP " + where + ": " + ::gai_strerror(failed);
    }
    std::string why = "cannot listen on TCP " + where;
    for (const addrinfo* at = found; at != nullptr; at = at->ai_next) {
        UniqueFd fd(::socket(at->ai_family, at->ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC,
                             at->ai_protocol));
        const int yes = 1;
        if (fd && ::setsockopt(fd.get(), SOL_SOCKET, SO_REUSEADDR, &yes, sizeof yes) == 0 &&
            ::bind(fd.get(), at->ai_addr, at->ai_addrlen) == 0 && ::listen(fd.get(), 64) == 0) {
            ::freeaddrinfo(found);
            return fd;
        }
        why = "cannot listen on TCP " + where + ": " + std::strerror(errno);
    }
    ::freeaddrinfo(found);
    return why;
}

std::string default_pulse_cookie() {
    if (const char* config = std::getenv("XDG_CONFIG_HOME"); config != nullptr && *config == '/') {
        return std::string(config) + "/pulse/cookie";
    }
    const char* home = std::getenv("HOME");
    return home != nullptr && *home == '/' ? std::string(home) + "/.config/pulse/cookie" : "";
}

std::variant<std::vector<uint8_t>, std::string> pulse_cookie(const std::string& path) {
    std::vector<uint8_t> cookie(kCookieLength);
    UniqueFd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
    if (fd) {
        if (::read(fd.get(), cookie.data(), cookie.size()) != static_cast<ssize_t>(cookie.size())) {
            return "the pulse cookie " + path + " is shorter than " +
                   std::to_string(kCookieLength) + " bytes";
        }
        return cookie;
    }
    if (errno != ENOENT) {
        return "cannot read the pulse cookie " + path + ": " + std::strerror(errno);
    }
    // Made as libpulse would make it, where libpulse reads it.
    const std::string folder = path.substr(0, path.rfind('/'));
    if (!folder.empty() && ::mkdir(folder.c_str(), 0700) != 0 && errno != EEXIST) {
        return "cannot make " + folder + ": " + std::strerror(errno);
    }
    if (::getrandom(cookie.data(), cookie.size(), 0) != static_cast<ssize_t>(cookie.size())) {
        return std::string("getrandom: ") + std::strerror(errno);
    }
    UniqueFd made(::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600));
    if (!made ||
        ::write(made.get(), cookie.data(), cookie.size()) != static_cast<ssize_t>(cookie.size())) {
        return "cannot write the pulse cookie " + path + ": " + std::strerror(errno);
    }
    return cookie;
}

bool serve_pulse_tcp(PulseServer& server, const std::string& where,
                     const std::string& cookie_path) {
    const std::string path = cookie_path.empty() ? default_pulse_cookie() : cookie_path;
    if (path.empty()) {
        log_warning("pulse", "no TCP listener: no $XDG_CONFIG_HOME or $HOME for the cookie, and "
                             "no [pulse] cookie");
        return false;
    }
    auto cookie = pulse_cookie(path);
    if (const auto* why = std::get_if<std::string>(&cookie)) {
        log_warning("pulse", "no TCP listener: " + *why);
        return false;
    }
    auto listening = listen_tcp_for_pulse(where);
    if (const auto* why = std::get_if<std::string>(&listening)) {
        log_warning("pulse", *why);
        return false;
    }
    server.serve_tcp(std::move(std::get<UniqueFd>(listening)),
                     std::move(std::get<std::vector<uint8_t>>(cookie)));
    log_info("pulse", "listening tcp=" + where + " cookie=" + path);
    return true;
}

bool serve_passed_pulse_socket(PulseServer& server, UniqueFd listener, const std::string& path) {
    if (const Status started = server.start(std::move(listener)); !started.ok()) {
        log_error("pulse", started.reason());
        return false;
    }
    log_info("pulse", "serving passed socket=" + path);
    return true;
}

} // namespace audiod::pulse
