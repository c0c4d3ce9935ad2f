#include "sap_announcer.h"

#include "sap.h"

#include <chrono>

namespace audiod::rtp {

namespace {

// A hash of the session description: SAP's message id, the same for every
// repetition of one version of the session (RFC 2974 §5).
uint16_t message_hash(const std::string& sdp) {
    uint32_t h = 2166136261u; // FNV-1a
    for (const char c : sdp) {
        h = (h ^ static_cast<uint8_t>(c)) * 16777619u;
    }
    return static_cast<uint16_t>(h ^ (h >> 16));
}

} // namespace

std::unique_ptr<SapAnnouncer> SapAnnouncer::start(const UdpEndpoint& session,
                                                  const std::string& sap_address, int ttl,
                                                  const std::string& sdp, std::string& error) {
    std::unique_ptr<SapAnnouncer> a(new SapAnnouncer());
    const std::string address =
        !sap_address.empty() ? sap_address : (session.ipv6 ? kSapGroupIpv6 : kSapGroupIpv4);
    const auto group = resolve_endpoint(address, kSapPort, error);
    if (!group) {
        return nullptr;
    }
    a->group_ = *group;
    a->fd_ = open_sender_socket(a->group_, ttl, error);
    if (!a->fd_) {
        return nullptr;
    }
    const LocalAddress origin = local_address_for(session);
    const uint16_t hash = message_hash(sdp);
    a->announcement_ = write_sap(false, hash, origin.span(), sdp);
    a->deletion_ = write_sap(true, hash, origin.span(), sdp);
    a->thread_ = std::thread([raw = a.get()] { raw->run(); });
    return a;
}

SapAnnouncer::~SapAnnouncer() {
    {
        std::lock_guard lock(mutex_);
        stopping_ = true;
    }
    wake_.notify_all();
    if (thread_.joinable()) {
        thread_.join();
    }
    (void)send_rt(fd_.get(), group_, deletion_.data(), deletion_.size());
}

uint64_t SapAnnouncer::announcements() const noexcept {
    std::lock_guard lock(mutex_);
    return sent_;
}

void SapAnnouncer::run() {
    std::unique_lock lock(mutex_);
    while (!stopping_) {
        // A failed send (no route yet) is retried at the next interval.
        if (send_rt(fd_.get(), group_, announcement_.data(), announcement_.size()) == 0) {
            ++sent_;
        }
        wake_.wait_for(lock, std::chrono::seconds(kSapIntervalSeconds),
                       [this] { return stopping_; });
    }
}

} // namespace audiod::rtp
