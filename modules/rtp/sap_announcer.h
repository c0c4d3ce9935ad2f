// Announces one RTP session by SAP while it exists: the SDP every
// kSapIntervalSeconds to the SAP group of the session's address family, and
// a deletion when it ends, so receivers (PulseAudio's module-rtp-recv,
// PipeWire, audiod's own discovering source) add and drop it by themselves.
// A thread of its own sends them; the sink's rt thread never does.
// Thread: control (constructor, destructor).
#pragma once

#include "udp_endpoint.h"

#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace audiod::rtp {

class SapAnnouncer {
public:
    // Starts announcing `sdp` for a session sent to `session`, to
    // `sap_address` (port 9875) or, if that is empty, to SAP's group for the
    // session's family. Returns nullptr with a message on failure.
    static std::unique_ptr<SapAnnouncer> start(const UdpEndpoint& session,
                                               const std::string& sap_address, int ttl,
                                               const std::string& sdp, std::string& error);
    // Sends the deletion and stops.
    ~SapAnnouncer();
    SapAnnouncer(const SapAnnouncer&) = delete;
    SapAnnouncer& operator=(const SapAnnouncer&) = delete;

    [[nodiscard]] uint64_t announcements() const noexcept;

private:
    SapAnnouncer() = default;
    void run();

    UdpEndpoint group_;
    UniqueFd fd_;
    std::vector<uint8_t> announcement_;
    std::vector<uint8_t> deletion_;
    mutable std::mutex mutex_;
    std::condition_variable wake_;
    bool stopping_ = false;
    uint64_t sent_ = 0;
    std::thread thread_;
};

} // namespace audiod::rtp
