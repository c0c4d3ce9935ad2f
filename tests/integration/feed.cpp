#include "feed.h"

#include <boost/test/unit_test.hpp>

#include <cerrno>
#include <csignal>
#include <cstring>
#include <fcntl.h>
#include <poll.h>
#include <sys/stat.h>
#include <thread>
#include <unistd.h>

namespace audiod::test {

Feed::Feed(std::string path)
    : path_(std::move(path)) {
    BOOST_REQUIRE_MESSAGE(::mkfifo(path_.c_str(), 0600) == 0,
                          "mkfifo " << path_ << ": " << std::strerror(errno));
    // A player that dies must fail the test with a message, not kill it.
    std::signal(SIGPIPE, SIG_IGN);
}

Feed::~Feed() {
    close();
}

void Feed::write(const void* data, size_t bytes, std::chrono::milliseconds limit) {
    const auto deadline = std::chrono::steady_clock::now() + limit;
    // Opening for writing fails with ENXIO until the player has opened the
    // pipe for reading; non-blocking, so a player that never starts fails
    // the test instead of hanging it.
    while (fd_ < 0) {
        fd_ = ::open(path_.c_str(), O_WRONLY | O_NONBLOCK | O_CLOEXEC);
        if (fd_ < 0) {
            BOOST_REQUIRE_MESSAGE(errno == ENXIO && std::chrono::steady_clock::now() < deadline,
                                  "no player opened " << path_ << ": " << std::strerror(errno));
            std::this_thread::sleep_for(std::chrono::milliseconds(10));
        }
    }
    const auto* at = static_cast<const char*>(data);
    while (bytes > 0) {
        const ssize_t n = ::write(fd_, at, bytes);
        if (n < 0 && errno == EAGAIN) {
            const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
                deadline - std::chrono::steady_clock::now());
            BOOST_REQUIRE_MESSAGE(left.count() > 0, "the player stopped reading " << path_);
            pollfd p{fd_, POLLOUT, 0};
            ::poll(&p, 1, static_cast<int>(std::min<long long>(left.count(), 100)));
            continue;
        }
        BOOST_REQUIRE_MESSAGE(n > 0 || errno == EINTR,
                              "writing " << path_ << ": " << std::strerror(errno));
        if (n > 0) {
            at += n;
            bytes -= static_cast<size_t>(n);
        }
    }
}

void Feed::close() {
    if (fd_ >= 0) {
        ::close(fd_);
        fd_ = -1;
    }
}

} // namespace audiod::test
