#include "pulse/pulse_socket.h"

#include "log.h"
#include "pulse/pulse_server.h"

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

namespace audiod::pulse {

std::string default_pulse_socket() {
    const char* runtime = std::getenv("XDG_RUNTIME_DIR");
    return runtime != nullptr && *runtime == '/' ? std::string(runtime) + "/pulse/native" : "";
}

std::variant<UniqueFd, std::string> listen_for_pulse(const std::string& path) {
    sockaddr_un address{};
    if (path.empty() || path.size() >= sizeof address.sun_path) {
        return "the pulse socket path '" + path + "' is empty or too long";
    }
    const std::string folder = path.substr(0, path.rfind('/'));
    if (!folder.empty() && ::mkdir(folder.c_str(), 0700) != 0 && errno != EEXIST) {
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
    ::chmod(path.c_str(), 0600);
    if (::listen(fd.get(), 64) != 0) {
        ::unlink(path.c_str());
        return "cannot listen on " + path + ": " + std::strerror(errno);
    }
    return fd;
}

bool start_pulse_server(PulseServer& server, const std::string& path, bool system_wide) {
    if (system_wide) {
        log_info("pulse", "a system-wide server does not serve pulse clients yet");
        return false;
    }
    if (path.empty()) {
        log_info("pulse", "no $XDG_RUNTIME_DIR and no [pulse] socket: pulse clients not served");
        return false;
    }
    auto listening = listen_for_pulse(path);
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

bool serve_passed_pulse_socket(PulseServer& server, UniqueFd listener, const std::string& path) {
    if (const Status started = server.start(std::move(listener)); !started.ok()) {
        log_error("pulse", started.reason());
        return false;
    }
    log_info("pulse", "serving passed socket=" + path);
    return true;
}

} // namespace audiod::pulse
