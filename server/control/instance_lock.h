// One server per socket. The lock is an flock on SOCKET.lock, held for the
// server's lifetime: the kernel drops it when the process dies however it
// dies, so a stale socket left by a crash is recognised (lock free) and
// reclaimed, while a live server (lock held) is never displaced.
#pragma once

#include "protocol/unique_fd.h"

#include <string>
#include <variant>

namespace audiod {

class InstanceLock {
public:
    // Takes the lock, or returns why not ("another audiod (pid 123) is
    // serving /run/user/1000/audiod/socket").
    static std::variant<InstanceLock, std::string> acquire(const std::string& socket_path);

    InstanceLock(InstanceLock&&) noexcept = default;
    InstanceLock& operator=(InstanceLock&&) noexcept = default;
    ~InstanceLock();

private:
    InstanceLock() = default;
    UniqueFd fd_;
    std::string path_;
};

// Binds and listens on a SOCK_SEQPACKET socket at `path`, replacing a stale
// socket file (call only while holding the InstanceLock). Returns the fd or
// an error message.
std::variant<UniqueFd, std::string> listen_on(const std::string& path);

} // namespace audiod
