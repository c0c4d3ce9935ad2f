// One server per socket. The lock is an flock on SOCKET.lock, held for the
// server's lifetime: the kernel drops it when the process dies however it
// dies, so a stale socket left by a crash is recognised (lock free) and
// reclaimed, while a live server (lock held) is never displaced.
#pragma once

#include "protocol/unique_fd.h"

#include <optional>
#include <string>
#include <sys/types.h>
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
// socket file (call only while holding the InstanceLock). The socket file
// gets its final access before the socket listens, so that no client finds
// it in between: mode 0600, or 0660 owned by `group` when one is given (a
// system-wide server). Returns the fd or an error message.
struct SocketGroup {
    gid_t gid = 0;
    std::string name; // for messages
};
std::variant<UniqueFd, std::string> listen_on(const std::string& path,
                                              const std::optional<SocketGroup>& group = {});
// Gives the socket file at `path` its access as listen_on says: "" or why
// not (the file is then removed).
[[nodiscard]] std::string set_socket_access(const std::string& path,
                                            const std::optional<SocketGroup>& group);

} // namespace audiod
