#include "protocol/packet_socket.h"
#include "protocol/wire.h"

#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/un.h>

namespace audiod::proto {

int send_packet(int fd, std::span<const uint8_t> bytes, std::span<const int> fds) noexcept {
    if (fds.size() > kMaxFdsPerMessage) {
        return -EINVAL;
    }
    iovec iov{const_cast<uint8_t*>(bytes.data()), bytes.size()};
    msghdr msg{};
    msg.msg_iov = &iov;
    msg.msg_iovlen = 1;
    alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int) * kMaxFdsPerMessage)] = {};
    if (!fds.empty()) {
        msg.msg_control = control;
        msg.msg_controllen = CMSG_SPACE(sizeof(int) * fds.size());
        cmsghdr* cmsg = CMSG_FIRSTHDR(&msg);
        cmsg->cmsg_level = SOL_SOCKET;
        cmsg->cmsg_type = SCM_RIGHTS;
        cmsg->cmsg_len = CMSG_LEN(sizeof(int) * fds.size());
        std::memcpy(CMSG_DATA(cmsg), fds.data(), sizeof(int) * fds.size());
    }
    for (;;) {
        const ssize_t sent = ::sendmsg(fd, &msg, MSG_DONTWAIT | MSG_NOSIGNAL);
        if (sent >= 0) {
            return static_cast<size_t>(sent) == bytes.size() ? 0 : -EMSGSIZE;
        }
        if (errno != EINTR) {
            return -errno;
        }
    }
}

int recv_packet(int fd, Packet& out) {
    out.bytes.resize(kMaxMessageBytes);
    out.fds.clear();
    iovec iov{out.bytes.data(), out.bytes.size()};
    msghdr msg{};
    msg.msg_iov = &iov;
    msg.msg_iovlen = 1;
    alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int) * kMaxFdsPerMessage)] = {};
    msg.msg_control = control;
    msg.msg_controllen = sizeof control;

    ssize_t received = 0;
    for (;;) {
        received = ::recvmsg(fd, &msg, MSG_DONTWAIT | MSG_CMSG_CLOEXEC);
        if (received >= 0 || errno != EINTR) {
            break;
        }
    }
    if (received < 0) {
        out.bytes.clear();
        return -errno;
    }
    // Take ownership of every descriptor that arrived, whatever else is wrong,
    // so a hostile peer cannot leak descriptors into us.
    for (cmsghdr* cmsg = CMSG_FIRSTHDR(&msg); cmsg != nullptr; cmsg = CMSG_NXTHDR(&msg, cmsg)) {
        if (cmsg->cmsg_level == SOL_SOCKET && cmsg->cmsg_type == SCM_RIGHTS) {
            const size_t count = (cmsg->cmsg_len - CMSG_LEN(0)) / sizeof(int);
            for (size_t i = 0; i < count; ++i) {
                int received_fd = -1;
                std::memcpy(&received_fd, CMSG_DATA(cmsg) + i * sizeof(int), sizeof(int));
                out.fds.emplace_back(received_fd);
            }
        }
    }
    if (received == 0) {
        out.bytes.clear();
        out.fds.clear();
        return -ECONNRESET;
    }
    if ((msg.msg_flags & (MSG_TRUNC | MSG_CTRUNC)) != 0) {
        out.bytes.clear();
        out.fds.clear();
        return -EMSGSIZE;
    }
    out.bytes.resize(static_cast<size_t>(received));
    return 0;
}

static_assert(POLLIN == 0x001);

int wait_for(int fd, short events, const Deadline& deadline) noexcept {
    for (;;) {
        pollfd pfd{fd, events, 0};
        const int ready = ::poll(&pfd, 1, deadline.poll_timeout_ms());
        if (ready > 0) {
            return 0;
        }
        if (ready == 0) {
            return -ETIMEDOUT;
        }
        if (errno != EINTR) {
            return -errno;
        }
        if (deadline.expired()) {
            return -ETIMEDOUT;
        }
    }
}

int connect_seqpacket(const std::string& path) noexcept {
    sockaddr_un addr{};
    if (path.size() >= sizeof addr.sun_path) {
        return -ENAMETOOLONG;
    }
    addr.sun_family = AF_UNIX;
    std::memcpy(addr.sun_path, path.c_str(), path.size() + 1);
    // Non-blocking while it connects: connect() on a unix socket does not
    // wait for accept(), but a blocking one whose listener's backlog is full
    // sleeps until the server accepts — for ever, if it never does (a server
    // stalled as it starts; a client's supervisor so blocked would hold
    // up the player's close). Non-blocking, that is EAGAIN at once; the
    // caller tries again later. Once connected the socket blocks as before.
    UniqueFd fd(::socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC | SOCK_NONBLOCK, 0));
    if (!fd) {
        return -errno;
    }
    for (;;) {
        if (::connect(fd.get(), reinterpret_cast<const sockaddr*>(&addr), sizeof addr) == 0) {
            const int flags = ::fcntl(fd.get(), F_GETFL);
            if (flags < 0 || ::fcntl(fd.get(), F_SETFL, flags & ~O_NONBLOCK) != 0) {
                return -errno;
            }
            return fd.release();
        }
        if (errno != EINTR) {
            return -errno;
        }
    }
}

} // namespace audiod::proto
