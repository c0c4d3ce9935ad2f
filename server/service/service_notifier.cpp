#include "service/service_notifier.h"

#include "protocol/unique_fd.h"

#include <cerrno>
#include <cstddef>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

namespace audiod {

ServiceNotifier ServiceNotifier::from_environment() {
    ServiceNotifier notifier;
    if (const char* socket = std::getenv("NOTIFY_SOCKET"); socket != nullptr) {
        notifier.socket_ = socket;
    }
    ::unsetenv("NOTIFY_SOCKET");
    return notifier;
}

Status ServiceNotifier::ready(const std::string& status) const {
    return send("READY=1\nSTATUS=" + status + "\nMAINPID=" + std::to_string(::getpid()));
}

Status ServiceNotifier::reloading() const {
    timespec now{};
    ::clock_gettime(CLOCK_MONOTONIC, &now);
    const auto usec =
        static_cast<uint64_t>(now.tv_sec) * 1000000u + static_cast<uint64_t>(now.tv_nsec) / 1000u;
    return send("RELOADING=1\nSTATUS=reloading\nMONOTONIC_USEC=" + std::to_string(usec));
}

Status ServiceNotifier::stopping() const {
    return send("STOPPING=1\nSTATUS=stopping");
}

Status ServiceNotifier::status(const std::string& text) const {
    return send("STATUS=" + text);
}

Status ServiceNotifier::send(const std::string& message) const {
    if (socket_.empty()) {
        return Status::success();
    }
    sockaddr_un address{};
    address.sun_family = AF_UNIX;
    if ((socket_[0] != '/' && socket_[0] != '@') || socket_.size() >= sizeof address.sun_path) {
        return Status::failure("NOTIFY_SOCKET=" + socket_ + " is not a usable socket address");
    }
    std::memcpy(address.sun_path, socket_.data(), socket_.size());
    if (socket_[0] == '@') {
        address.sun_path[0] = '\0'; // abstract namespace
    }
    const auto length = static_cast<socklen_t>(offsetof(sockaddr_un, sun_path) + socket_.size() +
                                               (socket_[0] == '/'));
    UniqueFd fd(::socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0));
    if (!fd) {
        return Status::failure(std::string("notify socket: ") + std::strerror(errno));
    }
    // The manager reads at its own pace; never let a full queue stall the
    // control thread.
    if (::sendto(fd.get(), message.data(), message.size(), MSG_NOSIGNAL | MSG_DONTWAIT,
                 reinterpret_cast<const sockaddr*>(&address), length) < 0) {
        return Status::failure("cannot notify " + socket_ + ": " + std::strerror(errno));
    }
    return Status::success();
}

} // namespace audiod
