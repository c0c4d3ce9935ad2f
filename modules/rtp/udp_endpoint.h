// Where RTP goes: a resolved UDP address (IPv4 or IPv6, unicast or a
// multicast group) and the non-blocking sending socket for it.
// Thread: control (resolving and opening may block briefly); send_rt: rt.
#pragma once

#include "protocol/unique_fd.h"

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <sys/socket.h>

namespace audiod::rtp {

struct UdpEndpoint {
    sockaddr_storage address{};
    socklen_t size = 0;
    bool ipv6 = false;
    bool multicast = false;
    std::string host; // numeric, as written into SDP
    uint16_t port = 0;

    // The same host at another port (RTCP goes to port + 1).
    [[nodiscard]] UdpEndpoint with_port(uint16_t other) const;
};

// Resolves HOST (a numeric address or a name) and PORT.
[[nodiscard]] std::optional<UdpEndpoint> resolve_endpoint(const std::string& host, uint16_t port,
                                                          std::string& error);

// A non-blocking UDP socket for sending to `to`, with `ttl` as the multicast
// TTL (IPv4) or hop limit (IPv6). Multicast loops back to this host, so a
// receiver on the same machine hears it; a unicast socket is connected, so
// ICMP errors (nobody listening, no route) are reported by send_rt.
[[nodiscard]] UniqueFd open_sender_socket(const UdpEndpoint& to, int ttl, std::string& error);

// A non-blocking UDP socket bound to `local`: a local address (any, or one
// of this host's) or a multicast group, which it joins on the default
// interface. Bound with SO_REUSEADDR, so several receivers may share a group.
[[nodiscard]] UniqueFd open_receiver_socket(const UdpEndpoint& local, std::string& error);

// The local address this host would send from to reach `to` (for SDP's
// origin and SAP's originating source): 4 or 16 bytes and its text. Falls
// back to the unspecified address when there is no route.
struct LocalAddress {
    uint8_t bytes[16]{};
    size_t size = 4;
    std::string text;
    [[nodiscard]] std::span<const uint8_t> span() const { return {bytes, size}; }
};
[[nodiscard]] LocalAddress local_address_for(const UdpEndpoint& to);

// Sends one datagram without blocking. Returns 0 or the errno that dropped
// it (EAGAIN: the socket buffer is full; EHOSTUNREACH, ENETUNREACH...).
// ECONNREFUSED is not this datagram's: a connected socket reports an ICMP
// "port unreachable" for an earlier one at the next send, and does not
// make that send. It is made again, once, and `refused` (if given) says an
// earlier datagram was refused. (Before, the datagram was dropped: a
// receiver that came up after refusals lost the first packet sent to it,
// a stress pass found.) Thread: rt — sendto with MSG_DONTWAIT neither
// blocks nor allocates in user space.
[[nodiscard]] int send_rt(int fd, const UdpEndpoint& to, const uint8_t* data, size_t size,
                          bool* refused = nullptr) noexcept;

} // namespace audiod::rtp
