#include "control/instance_lock.h"

#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <sys/file.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

namespace audiod {

std::variant<InstanceLock, std::string> InstanceLock::acquire(const std::string& socket_path) {
    const std::string path = socket_path + ".lock";
    UniqueFd fd(::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600));
    if (!fd) {
        return "cannot open " + path + ": " + std::strerror(errno);
    }
    if (::flock(fd.get(), LOCK_EX | LOCK_NB) != 0) {
        if (errno != EWOULDBLOCK) {
            return "cannot lock " + path + ": " + std::strerror(errno);
        }
        char pid[32] = {};
        const ssize_t n = ::pread(fd.get(), pid, sizeof pid - 1, 0);
        std::string holder = n > 0 ? std::string(pid, static_cast<size_t>(n)) : "?";
        while (!holder.empty() && (holder.back() == '\n' || holder.back() == ' ')) {
            holder.pop_back();
        }
        return "another audiod (pid " + holder + ") is already serving " + socket_path;
    }
    const std::string pid = std::to_string(::getpid()) + "\n";
    if (::ftruncate(fd.get(), 0) != 0 ||
        ::pwrite(fd.get(), pid.data(), pid.size(), 0) != static_cast<ssize_t>(pid.size())) {
        return "cannot write " + path + ": " + std::strerror(errno);
    }
    InstanceLock lock;
    lock.fd_ = std::move(fd);
    lock.path_ = path;
    return lock;
}

InstanceLock::~InstanceLock() {
    // The lock file stays (removing it would race a server starting now);
    // closing the fd releases the lock.
}

std::string set_socket_access(const std::string& path, const std::optional<SocketGroup>& group) {
    if (!group) {
        ::chmod(path.c_str(), 0600);
        return "";
    }
    if (::chown(path.c_str(), static_cast<uid_t>(-1), group->gid) != 0 ||
        ::chmod(path.c_str(), 0660) != 0) {
        const std::string why = std::strerror(errno);
        ::unlink(path.c_str());
        return "cannot give " + path + " to group " + group->name + ": " + why;
    }
    return "";
}

std::variant<UniqueFd, std::string> listen_on(const std::string& path,
                                              const std::optional<SocketGroup>& group) {
    sockaddr_un addr{};
    if (path.size() >= sizeof addr.sun_path) {
        return "socket path too long: " + path;
    }
    addr.sun_family = AF_UNIX;
    std::memcpy(addr.sun_path, path.c_str(), path.size() + 1);

    struct stat st {};
    if (::lstat(path.c_str(), &st) == 0) {
        if (!S_ISSOCK(st.st_mode)) {
            return path + " exists and is not a socket; refusing to replace it";
        }
        ::unlink(path.c_str()); // stale: we hold the instance lock
    }
    UniqueFd fd(::socket(AF_UNIX, SOCK_SEQPACKET | SOCK_NONBLOCK | SOCK_CLOEXEC, 0));
    if (!fd) {
        return std::string("socket: ") + std::strerror(errno);
    }
    if (::bind(fd.get(), reinterpret_cast<const sockaddr*>(&addr), sizeof addr) != 0) {
        return "cannot bind " + path + ": " + std::strerror(errno);
    }
    if (std::string why = set_socket_access(path, group); !why.empty()) {
        return why;
    }
    if (::listen(fd.get(), 64) != 0) {
        return "cannot listen on " + path + ": " + std::strerror(errno);
    }
    return fd;
}

} // namespace audiod
