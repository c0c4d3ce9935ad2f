#include "sap_discovery.h"

#include "sap.h"
#include "sdp.h"
#include "udp_endpoint.h"

#include <algorithm>
#include <cstring>
#include <netinet/in.h>
#include <poll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

namespace audiod::rtp {

namespace {

constexpr int kPollMs = 1000; // how often sessions are checked for expiry

const char* payload_option(Encoding encoding) {
    switch (encoding) {
    case Encoding::l16:
        return "l16";
    case Encoding::l24:
        return "l24";
    default:
        return "opus";
    }
}

} // namespace

SapDiscovery::SapDiscovery(const audiod_host* host, Settings settings)
    : host_(host)
    , settings_(std::move(settings)) {}

std::unique_ptr<SapDiscovery> SapDiscovery::create(const audiod_host* host, Settings settings,
                                                   std::string& error) {
    if (host == nullptr || host->request_source == nullptr) {
        error = "this server cannot open sources for a module (discover needs module ABI 4)";
        return nullptr;
    }
    std::unique_ptr<SapDiscovery> discovery(new SapDiscovery(host, std::move(settings)));
    const auto group = resolve_endpoint(kSapGroupIpv4, kSapPort, error);
    if (!group) {
        return nullptr;
    }
    discovery->socket_ = open_receiver_socket(*group, error);
    if (!discovery->socket_) {
        return nullptr;
    }
    discovery->stop_fd_ = UniqueFd(::eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC));
    if (!discovery->stop_fd_) {
        error = "cannot create an eventfd";
        return nullptr;
    }
    discovery->thread_ = std::thread([d = discovery.get()] { d->run(); });
    return discovery;
}

SapDiscovery::~SapDiscovery() {
    const uint64_t one = 1;
    [[maybe_unused]] const ssize_t r = ::write(stop_fd_.get(), &one, sizeof one);
    if (thread_.joinable()) {
        thread_.join();
    }
}

SapDiscovery::Stats SapDiscovery::stats() const {
    const std::lock_guard lock(stats_mutex_);
    return stats_;
}

std::string SapDiscovery::source_name(const std::string& session, uint16_t port) {
    std::string name;
    for (const char c : session) {
        const bool plain = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
                           (c >= '0' && c <= '9') || c == '.' || c == '_' || c == '-';
        if (plain) {
            name += c;
        } else if (!name.empty() && name.back() != '-') {
            name += '-';
        }
        if (name.size() >= 48) {
            break;
        }
    }
    while (!name.empty() && (name.back() == '-' || name.front() == '.')) {
        name.erase(name.back() == '-' ? name.end() - 1 : name.begin());
    }
    return name.empty() ? "rtp-" + std::to_string(port) : name;
}

void SapDiscovery::run() {
    std::vector<uint8_t> datagram(65536);
    pollfd fds[2] = {{socket_.get(), POLLIN, 0}, {stop_fd_.get(), POLLIN, 0}};
    for (;;) {
        ::poll(fds, 2, kPollMs);
        if ((fds[1].revents & POLLIN) != 0) {
            return;
        }
        for (;;) {
            sockaddr_storage from{};
            socklen_t from_size = sizeof from;
            const ssize_t n =
                ::recvfrom(socket_.get(), datagram.data(), datagram.size(), MSG_DONTWAIT,
                           reinterpret_cast<sockaddr*>(&from), &from_size);
            if (n < 0) {
                break;
            }
            handle(datagram.data(), static_cast<size_t>(n), from);
        }
        const auto now = std::chrono::steady_clock::now();
        for (size_t i = sessions_.size(); i-- > 0;) {
            if (now - sessions_[i].heard > kExpiry) {
                forget(i);
            }
        }
    }
}

void SapDiscovery::handle(const uint8_t* data, size_t size, const sockaddr_storage& from) {
    const auto ignore = [&] {
        const std::lock_guard lock(stats_mutex_);
        ++stats_.ignored;
    };
    const bool v6 = from.ss_family == AF_INET6;
    const auto* address = v6 ? reinterpret_cast<const sockaddr_in6*>(&from)->sin6_addr.s6_addr
                             : reinterpret_cast<const uint8_t*>(
                                   &reinterpret_cast<const sockaddr_in*>(&from)->sin_addr);
    if (!allowed(settings_.allow, address, v6)) {
        ignore();
        return;
    }
    const char* why = nullptr;
    const auto message = parse_sap({data, size}, why);
    if (!message) {
        ignore();
        return;
    }
    const auto same_announcement = [&](const Session& s) {
        return s.hash == message->hash && s.origin.size() == message->origin.size() &&
               std::equal(s.origin.begin(), s.origin.end(), message->origin.begin());
    };
    if (message->deletion) {
        const auto it = std::find_if(sessions_.begin(), sessions_.end(), same_announcement);
        {
            const std::lock_guard lock(stats_mutex_);
            ++stats_.deletions;
        }
        if (it != sessions_.end()) {
            forget(static_cast<size_t>(it - sessions_.begin()));
        }
        return;
    }
    std::string error;
    const auto sdp = parse_sdp(message->sdp, error);
    if (!sdp) {
        ignore();
        return;
    }
    {
        const std::lock_guard lock(stats_mutex_);
        ++stats_.announcements;
    }
    const std::string key = sdp->origin_address + " " + std::to_string(sdp->session_id);
    const auto known = std::find_if(sessions_.begin(), sessions_.end(),
                                    [&](const Session& s) { return s.key == key; });
    if (known != sessions_.end()) {
        // Heard again; a new version (another hash) is the same session.
        known->heard = std::chrono::steady_clock::now();
        known->hash = message->hash;
        known->origin.assign(message->origin.begin(), message->origin.end());
        return;
    }
    Session session;
    session.origin.assign(message->origin.begin(), message->origin.end());
    session.hash = message->hash;
    session.key = key;
    session.name = source_name(sdp->session_name, sdp->port);
    session.heard = std::chrono::steady_clock::now();
    const bool taken = std::any_of(sessions_.begin(), sessions_.end(),
                                   [&](const Session& s) { return s.name == session.name; });
    if (taken || sessions_.size() >= kMaxSessions) {
        ignore();
        return;
    }
    std::vector<std::pair<std::string, std::string>> options{
        {"address", sdp->address},
        {"port", std::to_string(sdp->port)},
        {"payload", payload_option(sdp->encoding)},
        {"payload-type", std::to_string(sdp->payload_type)},
        {"clock-rate", std::to_string(sdp->rate)},
        {"stream-channels", std::to_string(sdp->channels)},
    };
    if (sdp->mediaclk_direct) { // AES67: the RTP times are the PTP clock's
        options.emplace_back("media-clock", "direct");
        options.emplace_back("mediaclk-offset", std::to_string(*sdp->mediaclk_direct));
    }
    options.insert(options.end(), settings_.passed_on.begin(), settings_.passed_on.end());
    request(session, false, options);
    sessions_.push_back(std::move(session));
    publish_sessions();
}

void SapDiscovery::forget(size_t index) {
    request(sessions_[index], true, {});
    sessions_.erase(sessions_.begin() + static_cast<ptrdiff_t>(index));
    publish_sessions();
}

void SapDiscovery::publish_sessions() {
    std::string names;
    for (const Session& s : sessions_) {
        names += (names.empty() ? "" : ",") + s.name;
    }
    const std::lock_guard lock(stats_mutex_);
    stats_.sessions = std::move(names);
}

void SapDiscovery::request(const Session& session, bool remove,
                           const std::vector<std::pair<std::string, std::string>>& options) {
    std::vector<audiod_option> raw;
    raw.reserve(options.size());
    for (const auto& [key, value] : options) {
        raw.push_back({key.c_str(), value.c_str()});
    }
    host_->request_source(host_, settings_.requester.c_str(), "rtp", session.name.c_str(),
                          raw.data(), raw.size(), remove ? 1 : 0);
}

} // namespace audiod::rtp
