#include "ptp_follower.h"

#include "monotonic_time.h"
#include "ptp_management.h"

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <poll.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

namespace audiod::rtp {

namespace {

constexpr int64_t kSilentNs = 3'000'000'000; // unreachable after this long without answers
constexpr auto kAskEvery = std::chrono::seconds(1);
constexpr int kAnswerWaitMs = 300;

bool socket_address(const std::string& path, sockaddr_un& address) {
    std::memset(&address, 0, sizeof address);
    address.sun_family = AF_UNIX;
    if (path.empty() || path.size() >= sizeof address.sun_path) {
        return false;
    }
    std::memcpy(address.sun_path, path.data(), path.size());
    return true;
}

} // namespace

std::unique_ptr<PtpFollower> PtpFollower::start(const std::string& path, std::string& error) {
    sockaddr_un address{};
    if (!socket_address(path, address)) {
        error = "ptp4l: \"" + path + "\" cannot be a socket's path (1 to " +
                std::to_string(sizeof address.sun_path - 1) + " bytes)";
        return nullptr;
    }
    // ptp4l answers to the asker's address, which must be a file: ptp4l
    // 3.1 sends nothing to an abstract one. In the runtime directory (a
    // user's, or the one systemd makes a system service), as pmc's is in
    // /var/run.
    static std::atomic<unsigned> made{0};
    std::string runtime = "/tmp";
    for (const char* name : {"XDG_RUNTIME_DIR", "RUNTIME_DIRECTORY"}) {
        if (const char* dir = std::getenv(name); dir != nullptr && dir[0] == '/') {
            runtime = std::string(dir).substr(0, std::string(dir).find(':')); // the first of a list
            break;
        }
    }
    const std::string own =
        runtime + "/audiod-ptp4l-" + std::to_string(getpid()) + "-" + std::to_string(made++);
    sockaddr_un own_address{};
    if (!socket_address(own, own_address)) {
        error = "ptp4l: no room for a socket to ask it from in " + own;
        return nullptr;
    }
    const int fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    unlink(own.c_str()); // a previous server's of the same pid
    if (fd < 0 ||
        bind(fd, reinterpret_cast<const sockaddr*>(&own_address), sizeof own_address) != 0) {
        error = "ptp4l: cannot open a socket to ask it from, " + own + ": " + std::strerror(errno);
        if (fd >= 0) {
            close(fd);
        }
        return nullptr;
    }
    std::unique_ptr<PtpFollower> follower(new PtpFollower(path, own, fd));
    follower->thread_ = std::thread([f = follower.get()] { f->run(); });
    return follower;
}

PtpFollower::PtpFollower(std::string path, std::string own, int fd)
    : path_(std::move(path))
    , own_(std::move(own))
    , fd_(fd) {}

PtpFollower::~PtpFollower() {
    {
        std::lock_guard lock(mutex_);
        stopping_ = true;
    }
    wake_.notify_all();
    if (thread_.joinable()) {
        thread_.join();
    }
    close(fd_);
    unlink(own_.c_str());
}

bool PtpFollower::answering() const noexcept {
    const int64_t at = answered_at_ns_.load(std::memory_order_relaxed);
    return at != 0 && monotonic_ns() - at < kSilentNs;
}

void PtpFollower::run() {
    std::unique_lock lock(mutex_);
    while (!stopping_) {
        lock.unlock();
        ask();
        take_answers();
        lock.lock();
        wake_.wait_for(lock, kAskEvery, [this] { return stopping_; });
    }
}

void PtpFollower::ask() {
    sockaddr_un to{};
    (void)socket_address(path_, to);
    for (const uint16_t id : {kPtpTimePropertiesDataSet, kPtpTimeStatusNp}) {
        uint8_t request[kPtpManagementRequestSize];
        write_ptp_get(id, ++sequence_, static_cast<uint32_t>(getpid()), 0, request);
        // Not there yet (ptp4l starts later) or gone: asked again in a second.
        (void)sendto(fd_, request, sizeof request, MSG_DONTWAIT,
                     reinterpret_cast<const sockaddr*>(&to), sizeof to);
    }
}

void PtpFollower::take_answers() {
    // Both answers, or what came of them within the wait.
    const int64_t until = monotonic_ns() + int64_t{kAnswerWaitMs} * 1'000'000;
    int pending = 2;
    while (pending > 0) {
        const int64_t left_ms = (until - monotonic_ns()) / 1'000'000;
        pollfd p{fd_, POLLIN, 0};
        if (left_ms <= 0 || poll(&p, 1, static_cast<int>(left_ms)) <= 0) {
            return;
        }
        uint8_t message[512];
        const ssize_t n = recv(fd_, message, sizeof message, MSG_DONTWAIT);
        PtpAnswer answer;
        if (n <= 0 || !parse_ptp_answer({message, static_cast<size_t>(n)}, answer) ||
            static_cast<uint16_t>(sequence_ - answer.sequence) > 1) {
            continue; // an old answer, or not one
        }
        --pending;
        std::lock_guard lock(mutex_);
        ++answers_;
        if (answer.id == kPtpTimePropertiesDataSet) {
            timescale_minus_utc_ns_.store(
                answer.ptp_timescale ? int64_t{answer.utc_offset_s} * 1'000'000'000 : 0,
                std::memory_order_relaxed);
            continue;
        }
        grandmaster_ = answer.grandmaster;
        grandmaster_present_ = answer.grandmaster_present;
        // Without a grandmaster of another machine's, this clock is the
        // reference (ptp4l is the grandmaster, or waits to hear one).
        measured_ns_ = answer.grandmaster_present ? answer.master_offset_ns : 0;
        wall_ahead_ns_.store(filter_.take(measured_ns_), std::memory_order_relaxed);
        known_ = true;
        answered_at_ns_.store(monotonic_ns(), std::memory_order_relaxed);
    }
}

std::string PtpFollower::describe() const {
    std::lock_guard lock(mutex_);
    const char* state = !answering()           ? (known_ ? "unreachable-holding" : "unreachable")
                        : grandmaster_present_ ? "following"
                                               : "grandmaster";
    char grandmaster[32];
    std::snprintf(grandmaster, sizeof grandmaster, "%06llx.%04llx.%06llx",
                  static_cast<unsigned long long>(grandmaster_ >> 40),
                  static_cast<unsigned long long>((grandmaster_ >> 24) & 0xffff),
                  static_cast<unsigned long long>(grandmaster_ & 0xffffff));
    std::string text = "ptp4l=" + path_ + "\nptp4l-state=" + state;
    if (known_) {
        text.append("\nptp4l-grandmaster=").append(grandmaster);
        text.append("\nptp4l-offset-ns=").append(std::to_string(measured_ns_));
        text.append("\nptp4l-utc-offset-s=")
            .append(std::to_string(timescale_minus_utc_ns_.load(std::memory_order_relaxed) /
                                   1'000'000'000));
    }
    text.append("\nptp4l-answers=").append(std::to_string(answers_));
    text.append("\nptp4l-outliers=").append(std::to_string(filter_.outliers())).append("\n");
    return text;
}

} // namespace audiod::rtp
