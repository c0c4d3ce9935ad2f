// The seqpacket transport: whole messages, descriptors passed and received,
// bounded waits, and hostile descriptor floods closed rather than leaked.
#include "protocol/packet_socket.h"

#include <boost/test/unit_test.hpp>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <dirent.h>
#include <fcntl.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>
#include <vector>

using namespace audiod;
using namespace audiod::proto;

namespace {

struct SocketPair {
    SocketPair() {
        int fds[2];
        BOOST_REQUIRE(::socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, fds) == 0);
        a.reset(fds[0]);
        b.reset(fds[1]);
    }
    UniqueFd a;
    UniqueFd b;
};

size_t open_fd_count() {
    size_t n = 0;
    DIR* dir = ::opendir("/proc/self/fd");
    while (const dirent* e = ::readdir(dir)) {
        n += e->d_name[0] != '.';
    }
    ::closedir(dir);
    return n;
}

} // namespace

BOOST_AUTO_TEST_SUITE(packet_socket)

BOOST_AUTO_TEST_CASE(message_boundaries_kept) {
    SocketPair p;
    const std::vector<uint8_t> one{1, 2, 3};
    const std::vector<uint8_t> two{4, 5};
    BOOST_REQUIRE_EQUAL(send_packet(p.a.get(), one), 0);
    BOOST_REQUIRE_EQUAL(send_packet(p.a.get(), two), 0);
    Packet packet;
    BOOST_REQUIRE_EQUAL(recv_packet(p.b.get(), packet), 0);
    BOOST_CHECK(packet.bytes == one);
    BOOST_REQUIRE_EQUAL(recv_packet(p.b.get(), packet), 0);
    BOOST_CHECK(packet.bytes == two);
    BOOST_CHECK_EQUAL(recv_packet(p.b.get(), packet), -EAGAIN);
}

BOOST_AUTO_TEST_CASE(descriptors_travel) {
    SocketPair p;
    int pipe_fds[2];
    BOOST_REQUIRE(::pipe(pipe_fds) == 0);
    UniqueFd read_end(pipe_fds[0]);
    UniqueFd write_end(pipe_fds[1]);
    const std::vector<uint8_t> bytes{9};
    const int fds[1] = {write_end.get()};
    BOOST_REQUIRE_EQUAL(send_packet(p.a.get(), bytes, fds), 0);
    write_end.reset();

    Packet packet;
    BOOST_REQUIRE_EQUAL(recv_packet(p.b.get(), packet), 0);
    BOOST_REQUIRE_EQUAL(packet.fds.size(), 1u);
    BOOST_CHECK(::fcntl(packet.fds[0].get(), F_GETFD) & FD_CLOEXEC);
    BOOST_REQUIRE_EQUAL(::write(packet.fds[0].get(), "x", 1), 1);
    char c = 0;
    BOOST_REQUIRE_EQUAL(::read(read_end.get(), &c, 1), 1);
    BOOST_CHECK_EQUAL(c, 'x');
}

BOOST_AUTO_TEST_CASE(too_many_descriptors_are_closed_not_leaked) {
    SocketPair p;
    const size_t before = open_fd_count();
    // A hostile peer sends more descriptors than we accept in one message.
    int fds[16];
    for (int& fd : fds) {
        fd = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
    }
    std::vector<uint8_t> bytes{1};
    iovec iov{bytes.data(), bytes.size()};
    alignas(cmsghdr) char control[CMSG_SPACE(sizeof fds)] = {};
    msghdr msg{};
    msg.msg_iov = &iov;
    msg.msg_iovlen = 1;
    msg.msg_control = control;
    msg.msg_controllen = sizeof control;
    cmsghdr* cmsg = CMSG_FIRSTHDR(&msg);
    cmsg->cmsg_level = SOL_SOCKET;
    cmsg->cmsg_type = SCM_RIGHTS;
    cmsg->cmsg_len = CMSG_LEN(sizeof fds);
    std::memcpy(CMSG_DATA(cmsg), fds, sizeof fds);
    BOOST_REQUIRE(::sendmsg(p.a.get(), &msg, 0) == 1);
    for (int fd : fds) {
        ::close(fd);
    }
    Packet packet;
    BOOST_CHECK_EQUAL(recv_packet(p.b.get(), packet), -EMSGSIZE);
    BOOST_CHECK(packet.fds.empty());
    BOOST_CHECK_EQUAL(open_fd_count(), before);
}

BOOST_AUTO_TEST_CASE(hangup_reported) {
    SocketPair p;
    p.a.reset();
    Packet packet;
    BOOST_CHECK_EQUAL(recv_packet(p.b.get(), packet), -ECONNRESET);
}

BOOST_AUTO_TEST_CASE(wait_is_bounded) {
    SocketPair p;
    const auto start = std::chrono::steady_clock::now();
    BOOST_CHECK_EQUAL(wait_readable(p.b.get(), Deadline::after_ms(50)), -ETIMEDOUT);
    const auto waited = std::chrono::steady_clock::now() - start;
    BOOST_CHECK(waited >= std::chrono::milliseconds(45));
    BOOST_CHECK(waited < std::chrono::seconds(5));
}

BOOST_AUTO_TEST_CASE(connect_without_server_fails_at_once) {
    BOOST_CHECK_EQUAL(connect_seqpacket("/nonexistent/audiod/socket"), -ENOENT);
    BOOST_CHECK_EQUAL(connect_seqpacket(std::string(200, 'x')), -ENAMETOOLONG);
}

// A server that listens but never accepts (stalled as it starts): once its
// backlog is full a connect fails at once, where a blocking one slept until
// the server accepted. The tries are bounded by the test's timeout.
BOOST_AUTO_TEST_CASE(connect_to_a_server_that_never_accepts_fails_at_once,
                     *boost::unit_test::timeout(60)) {
    char dir[] = "/tmp/audiod-socket-XXXXXX";
    BOOST_REQUIRE(::mkdtemp(dir) != nullptr);
    const std::string path = std::string(dir) + "/socket";
    UniqueFd listener(::socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0));
    sockaddr_un addr{};
    addr.sun_family = AF_UNIX;
    std::memcpy(addr.sun_path, path.c_str(), path.size() + 1);
    BOOST_REQUIRE(::bind(listener.get(), reinterpret_cast<const sockaddr*>(&addr), sizeof addr) ==
                  0);
    BOOST_REQUIRE(::listen(listener.get(), 0) == 0);
    std::vector<UniqueFd> queued;
    int last = 0;
    for (int i = 0; i < 8 && last >= 0; ++i) {
        const auto start = std::chrono::steady_clock::now();
        last = connect_seqpacket(path);
        BOOST_CHECK(std::chrono::steady_clock::now() - start < std::chrono::seconds(5));
        if (last >= 0) {
            // A connection waits in the backlog as a connected socket that
            // blocks, like any the client uses.
            BOOST_CHECK_EQUAL(::fcntl(last, F_GETFL) & O_NONBLOCK, 0);
            queued.emplace_back(last);
        }
    }
    BOOST_CHECK_EQUAL(last, -EAGAIN);
    BOOST_CHECK_GE(queued.size(), 1u);
    ::unlink(path.c_str());
    ::rmdir(dir);
}

BOOST_AUTO_TEST_SUITE_END()
