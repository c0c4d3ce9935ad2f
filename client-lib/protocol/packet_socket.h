// Sending and receiving whole messages on a unix SOCK_SEQPACKET socket, with
// file descriptors attached (SCM_RIGHTS) and deadlines on every wait.
#pragma once

#include "protocol/deadline.h"
#include "protocol/unique_fd.h"

#include <cstdint>
#include <span>
#include <string>
#include <vector>

namespace audiod::proto {

inline constexpr size_t kMaxFdsPerMessage = 4;

struct Packet {
    std::vector<uint8_t> bytes;
    std::vector<UniqueFd> fds;
};

// Sends one packet without blocking (MSG_DONTWAIT, no SIGPIPE).
// Returns 0, or -errno (-EAGAIN when the socket's buffer is full).
[[nodiscard]] int send_packet(int fd, std::span<const uint8_t> bytes,
                              std::span<const int> fds = {}) noexcept;

// Receives one packet without blocking. Returns 0 and fills *out, or -errno:
// -EAGAIN when nothing is waiting, -ECONNRESET when the peer hung up,
// -EMSGSIZE when the packet or its descriptors did not fit (the descriptors
// that did arrive are closed).
[[nodiscard]] int recv_packet(int fd, Packet& out);

// Waits until fd reports one of `events` (POLLIN, POLLOUT; hang-ups always
// count). Returns 0, -ETIMEDOUT, or -errno.
[[nodiscard]] int wait_for(int fd, short events, const Deadline& deadline) noexcept;
[[nodiscard]] inline int wait_readable(int fd, const Deadline& deadline) noexcept {
    return wait_for(fd, 0x001 /* POLLIN */, deadline);
}

// Connects a SOCK_SEQPACKET socket to `path`. Returns the fd or -errno.
[[nodiscard]] int connect_seqpacket(const std::string& path) noexcept;

} // namespace audiod::proto
