// Finding RTP sessions by their SAP announcements (RFC 2974): an RTP source
// with `discover = true` listens on the group PulseAudio, PipeWire and
// audiod announce to (224.0.0.56, port 9875) and asks the server, through
// audiod_host::request_source, for one RTP source per session it can play
// (Opus, L16, L24), named after the session; and to close that source when
// the sender announces its deletion or stops announcing for kExpiry.
//
// Announcements are untrusted: a malformed one, or one for a stream audiod
// cannot play, or from a sender outside `allow`, is counted and ignored, and
// at most kMaxSessions are followed at once (a flood of announcements
// cannot make the server open sources without bound).
//
// Thread: a thread of its own; the control thread creates and destroys it
// and reads stats().
#pragma once

#include "audiod/module.h"
#include "protocol/unique_fd.h"
#include "rtp_receive_options.h"

#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <sys/socket.h>
#include <thread>
#include <vector>

namespace audiod::rtp {

class SapDiscovery {
public:
    static constexpr size_t kMaxSessions = 32;
    // RFC 2974 lets a session go after ten announcement intervals unheard.
    static constexpr auto kExpiry = std::chrono::seconds(50);

    struct Settings {
        std::string requester; // the discovering source's name
        // latency-ms, allow, link-offset-ms, delay-ms, ptp4l
        std::vector<std::pair<std::string, std::string>> passed_on;
        std::vector<AddressPrefix> allow;
    };
    struct Stats {
        uint64_t announcements = 0;
        uint64_t deletions = 0;
        uint64_t ignored = 0; // malformed, unplayable, refused or one too many
        std::string sessions; // the names of the sources asked for, comma-separated
    };

    static std::unique_ptr<SapDiscovery> create(const audiod_host* host, Settings settings,
                                                std::string& error);
    ~SapDiscovery();
    SapDiscovery(const SapDiscovery&) = delete;
    SapDiscovery& operator=(const SapDiscovery&) = delete;

    [[nodiscard]] Stats stats() const;
    // A session name as a source name: letters, digits, '.', '_' and '-'.
    [[nodiscard]] static std::string source_name(const std::string& session, uint16_t port);

private:
    struct Session {
        std::vector<uint8_t> origin; // SAP's originating source
        uint16_t hash = 0;
        std::string key; // SDP o=: address and session id, stable across versions
        std::string name;
        std::chrono::steady_clock::time_point heard;
    };

    SapDiscovery(const audiod_host* host, Settings settings);
    void run();
    void handle(const uint8_t* data, size_t size, const sockaddr_storage& from);
    void forget(size_t index);
    // Names the followed sessions in stats().
    void publish_sessions();
    void request(const Session& session, bool remove,
                 const std::vector<std::pair<std::string, std::string>>& options);

    const audiod_host* host_;
    Settings settings_;
    UniqueFd socket_;
    UniqueFd stop_fd_;
    std::thread thread_;
    std::vector<Session> sessions_; // the thread's own
    mutable std::mutex stats_mutex_;
    Stats stats_; // guarded by stats_mutex_
};

} // namespace audiod::rtp
