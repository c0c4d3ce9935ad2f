#include "udp_endpoint.h"

#include <arpa/inet.h>
#include <cerrno>
#include <cstring>
#include <netdb.h>
#include <netinet/in.h>

namespace audiod::rtp {

namespace {

std::string numeric_host(const sockaddr* address, socklen_t size) {
    char text[NI_MAXHOST] = "";
    getnameinfo(address, size, text, sizeof text, nullptr, 0, NI_NUMERICHOST);
    return text;
}

} // namespace

UdpEndpoint UdpEndpoint::with_port(uint16_t other) const {
    UdpEndpoint out = *this;
    out.port = other;
    if (ipv6) {
        reinterpret_cast<sockaddr_in6*>(&out.address)->sin6_port = htons(other);
    } else {
        reinterpret_cast<sockaddr_in*>(&out.address)->sin_port = htons(other);
    }
    return out;
}

std::optional<UdpEndpoint> resolve_endpoint(const std::string& host, uint16_t port,
                                            std::string& error) {
    addrinfo hints{};
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_DGRAM;
    hints.ai_flags = AI_NUMERICSERV;
    addrinfo* found = nullptr;
    const std::string service = std::to_string(port);
    if (const int rc = getaddrinfo(host.c_str(), service.c_str(), &hints, &found); rc != 0) {
        error = "cannot resolve '" + host + "': " + gai_strerror(rc);
        return std::nullopt;
    }
    UdpEndpoint out;
    std::memcpy(&out.address, found->ai_addr, found->ai_addrlen);
    out.size = found->ai_addrlen;
    out.ipv6 = found->ai_family == AF_INET6;
    freeaddrinfo(found);
    if (out.ipv6) {
        out.multicast =
            IN6_IS_ADDR_MULTICAST(&reinterpret_cast<const sockaddr_in6*>(&out.address)->sin6_addr);
    } else {
        const uint32_t a =
            ntohl(reinterpret_cast<const sockaddr_in*>(&out.address)->sin_addr.s_addr);
        out.multicast = (a >> 28) == 0xe; // 224.0.0.0/4
    }
    out.host = numeric_host(reinterpret_cast<const sockaddr*>(&out.address), out.size);
    out.port = port;
    return out;
}

UniqueFd open_sender_socket(const UdpEndpoint& to, int ttl, std::string& error) {
    const int family = to.ipv6 ? AF_INET6 : AF_INET;
    UniqueFd fd(socket(family, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0));
    if (!fd) {
        error = std::string("cannot create a UDP socket: ") + std::strerror(errno);
        return {};
    }
    const int loop = 1;
    const int rc =
        to.ipv6 ? setsockopt(fd.get(), IPPROTO_IPV6, IPV6_MULTICAST_HOPS, &ttl, sizeof ttl) |
                      setsockopt(fd.get(), IPPROTO_IPV6, IPV6_MULTICAST_LOOP, &loop, sizeof loop)
                : setsockopt(fd.get(), IPPROTO_IP, IP_MULTICAST_TTL, &ttl, sizeof ttl) |
                      setsockopt(fd.get(), IPPROTO_IP, IP_MULTICAST_LOOP, &loop, sizeof loop);
    if (rc != 0) {
        error = std::string("cannot set the multicast TTL: ") + std::strerror(errno);
        return {};
    }
    if (!to.multicast) {
        // Connected, a unicast socket hears ICMP errors: a host where nothing
        // listens shows as ECONNREFUSED in the sink's counts instead of
        // silently eating packets. Without a route yet, it stays unconnected.
        (void)connect(fd.get(), reinterpret_cast<const sockaddr*>(&to.address), to.size);
    }
    return fd;
}

UniqueFd open_receiver_socket(const UdpEndpoint& local, std::string& error) {
    UniqueFd fd(
        socket(local.ipv6 ? AF_INET6 : AF_INET, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0));
    if (!fd) {
        error = std::string("cannot create a UDP socket: ") + std::strerror(errno);
        return {};
    }
    const int on = 1;
    setsockopt(fd.get(), SOL_SOCKET, SO_REUSEADDR, &on, sizeof on);
    // Room for a burst: half a second of 20 ms Opus or 5 ms L16 packets.
    const int buffer = 1 << 20;
    setsockopt(fd.get(), SOL_SOCKET, SO_RCVBUF, &buffer, sizeof buffer);
    if (bind(fd.get(), reinterpret_cast<const sockaddr*>(&local.address), local.size) != 0) {
        error = "cannot listen on " + local.host + " port " + std::to_string(local.port) + ": " +
                std::strerror(errno);
        return {};
    }
    // Linux otherwise hands a socket the multicast traffic of every group
    // any socket on the host joined, if the port matches: another
    // session's packets would count as foreign here.
    const int off = 0;
    if (local.ipv6) {
#ifdef IPV6_MULTICAST_ALL
        setsockopt(fd.get(), IPPROTO_IPV6, IPV6_MULTICAST_ALL, &off, sizeof off);
#endif
    } else {
        setsockopt(fd.get(), IPPROTO_IP, IP_MULTICAST_ALL, &off, sizeof off);
    }
    if (local.multicast) {
        int rc = 0;
        if (local.ipv6) {
            ipv6_mreq join{};
            join.ipv6mr_multiaddr =
                reinterpret_cast<const sockaddr_in6*>(&local.address)->sin6_addr;
            rc = setsockopt(fd.get(), IPPROTO_IPV6, IPV6_JOIN_GROUP, &join, sizeof join);
        } else {
            ip_mreqn join{};
            join.imr_multiaddr = reinterpret_cast<const sockaddr_in*>(&local.address)->sin_addr;
            rc = setsockopt(fd.get(), IPPROTO_IP, IP_ADD_MEMBERSHIP, &join, sizeof join);
        }
        if (rc != 0) {
            error = "cannot join " + local.host + ": " + std::strerror(errno);
            return {};
        }
    }
    return fd;
}

LocalAddress local_address_for(const UdpEndpoint& to) {
    LocalAddress out;
    out.size = to.ipv6 ? 16 : 4;
    out.text = to.ipv6 ? "::" : "0.0.0.0";
    UniqueFd probe(socket(to.ipv6 ? AF_INET6 : AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0));
    // Connecting a UDP socket sends nothing; it only picks the route.
    if (!probe ||
        connect(probe.get(), reinterpret_cast<const sockaddr*>(&to.address), to.size) != 0) {
        return out;
    }
    sockaddr_storage local{};
    socklen_t size = sizeof local;
    if (getsockname(probe.get(), reinterpret_cast<sockaddr*>(&local), &size) != 0) {
        return out;
    }
    if (to.ipv6) {
        std::memcpy(out.bytes, &reinterpret_cast<const sockaddr_in6*>(&local)->sin6_addr, 16);
    } else {
        std::memcpy(out.bytes, &reinterpret_cast<const sockaddr_in*>(&local)->sin_addr, 4);
    }
    out.text = numeric_host(reinterpret_cast<const sockaddr*>(&local), size);
    return out;
}

int send_rt(int fd, const UdpEndpoint& to, const uint8_t* data, size_t size,
            bool* refused) noexcept {
    const auto send_once = [&] {
        return sendto(fd, data, size, MSG_DONTWAIT | MSG_NOSIGNAL,
                      reinterpret_cast<const sockaddr*>(&to.address), to.size);
    };
    ssize_t sent = send_once();
    if (sent < 0 && errno == ECONNREFUSED) {
        if (refused != nullptr) {
            *refused = true;
        }
        sent = send_once(); // the kernel cleared the error it reported
    }
    return sent == static_cast<ssize_t>(size) ? 0 : (sent < 0 ? errno : EMSGSIZE);
}

} // namespace audiod::rtp
