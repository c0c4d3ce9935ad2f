// Starting as a service: socket activation (the first client to connect
// starts the server on the socket a service manager made) and readiness
// reported by the systemd notify protocol. systemd-socket-activate plays the
// service manager, so no systemd as PID 1 is needed; audiod-unit-sandbox
// applies the unit's hardening as systemd would.
#include "fixtures/fixture_signals.h"
#include "helpers.h"

#include <boost/test/unit_test.hpp>

#include <algorithm>
#include <csignal>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <poll.h>
#include <sstream>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

using namespace audiod;
using namespace audiod::test;
using namespace std::chrono_literals;

namespace {

// The service manager's end of $NOTIFY_SOCKET: a datagram socket in a test
// directory that collects what the server reports.
class NotifyListener {
public:
    explicit NotifyListener(const std::string& path)
        : path_(path) {
        fd_ = ::socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
        BOOST_REQUIRE(fd_ >= 0);
        sockaddr_un address{};
        address.sun_family = AF_UNIX;
        BOOST_REQUIRE(path.size() < sizeof address.sun_path);
        std::memcpy(address.sun_path, path.c_str(), path.size() + 1);
        BOOST_REQUIRE(::bind(fd_, reinterpret_cast<const sockaddr*>(&address), sizeof address) ==
                      0);
    }
    NotifyListener(const NotifyListener&) = delete;
    ~NotifyListener() { ::close(fd_); }
    const std::string& path() const { return path_; }

    // The next message, or "" if none comes within `limit`.
    std::string next(std::chrono::milliseconds limit) {
        pollfd p{fd_, POLLIN, 0};
        if (::poll(&p, 1, static_cast<int>(limit.count())) != 1) {
            return "";
        }
        char buffer[4096];
        const ssize_t n = ::recv(fd_, buffer, sizeof buffer, 0);
        return n > 0 ? std::string(buffer, static_cast<size_t>(n)) : "";
    }

private:
    std::string path_;
    int fd_ = -1;
};

// The program a process runs now (a launcher that has exec'd shows the new one).
std::string program_of(pid_t pid) {
    std::error_code ignored;
    return std::filesystem::read_symlink("/proc/" + std::to_string(pid) + "/exe", ignored)
        .filename()
        .string();
}

// Waits until a socket bound at PATH listens. The file appears at bind(),
// before listen(): a client that connects then is refused. (Looked up in
// /proc/net/unix, since a probing connection would start the service.)
bool wait_for_listening(const std::string& path, std::chrono::milliseconds limit) {
    constexpr const char* kAcceptsConnections = "00010000"; // __SO_ACCEPTCON
    return eventually(
        [&] {
            std::ifstream table("/proc/net/unix");
            std::string line;
            while (std::getline(table, line)) {
                std::istringstream fields(line);
                std::string slot, references, protocol, flags, type, state, inode, bound;
                fields >> slot >> references >> protocol >> flags >> type >> state >> inode >>
                    bound;
                if (bound == path && flags == kAcceptsConnections) {
                    return true;
                }
            }
            return false;
        },
        limit);
}

// What audiod reports of itself (`audioctl --json info`) when it runs in
// UNIT's sandbox, after a client played through it. The client's counter
// must come out exact, and the server end cleanly on SIGTERM (a call
// outside the unit's system call filter would kill it with SIGSYS).
//
// It runs as root: on these machines even root lacks CAP_SYS_RESOURCE, so
// no RLIMIT_RTPRIO can be raised and no ordinary user may ever have
// SCHED_FIFO. Root's CAP_SYS_NICE grants what a user's RLIMIT_RTPRIO would,
// and what is under test is the unit's filter between the server and it.
std::string info_in_sandbox(const std::string& unit, const TempDir& dir, const std::string& name,
                            const std::vector<std::string>& server_args = {}) {
    const std::string socket = dir.file(name + ".socket");
    const std::string wav = dir.file(name + ".wav");
    {
        std::ofstream(dir.file(name + ".conf"))
            << "[server]\nrt-priority = 20\n\n[sinks.out]\ntype = \"file\"\npath = \"" << wav
            << "\"\n";
    }
    std::vector<std::string> argv;
#ifdef AUDIOD_SANITIZED
    // LeakSanitizer stops the world with ptrace(2) at exit, which the
    // unit's filter rightly forbids; the other tests check for leaks.
    argv = {installed("env"), "ASAN_OPTIONS=detect_leaks=0:abort_on_error=1"};
#endif
    for (const std::string& arg :
         {bin("audiod-unit-sandbox"), unit, std::string("--"), bin("audiod"),
          std::string("--socket"), socket, std::string("--config"), dir.file(name + ".conf"),
          std::string("--state"), dir.file(name + ".state")}) {
        argv.push_back(arg);
    }
    argv.insert(argv.end(), server_args.begin(), server_args.end());
    BackgroundProgram server(argv);
    BOOST_REQUIRE_MESSAGE(wait_for_socket(socket, 20s), server.output_so_far());
    const ProgramResult played =
        run_program({installed("env"), "AUDIOD_SOCKET=" + socket, bin("audiod-test-client"),
                     "--signal", "counter", "--frames", "24000"},
                    60s);
    BOOST_CHECK_MESSAGE(played.status == 0, played.err);
    const ProgramResult info = run_tool("audioctl", {"--socket", socket, "--json", "info"});
    BOOST_CHECK_MESSAGE(info.status == 0, info.err);
    ::kill(server.pid(), SIGTERM);
    const ProgramResult ended = server.finish(30s);
    BOOST_CHECK_MESSAGE(ended.status == 0, name << ": the sandboxed server ended with "
                                                << ended.status << ":\n"
                                                << ended.err);
    BOOST_CHECK_EQUAL(counter_frames_heard(wav), 24000u);
    return info.out;
}

bool says(const std::string& info, const std::string& field, const std::string& value) {
    const bool found = info.find("\"" + field + "\":\"" + value) != std::string::npos;
    BOOST_CHECK_MESSAGE(found, "wanted " << field << " " << value << " in " << info);
    return found;
}

} // namespace

BOOST_AUTO_TEST_SUITE(service)

BOOST_AUTO_TEST_CASE(the_first_client_starts_the_server_on_a_passed_socket_which_reports_ready) {
    TempDir dir;
    const std::string wav = dir.file("out.wav");
    const std::string socket = dir.file("socket");
    { std::ofstream(dir.file("audiod.conf")) << file_sink_config(wav); }
    NotifyListener notify(dir.file("notify"));
    ::setenv("AUDIOD_SOCKET", socket.c_str(), 1);
    BackgroundProgram manager({installed("systemd-socket-activate"), "--seqpacket", "-l", socket,
                               "-E", "NOTIFY_SOCKET=" + notify.path(), "--", bin("audiod"),
                               "--config", dir.file("audiod.conf"), "--state", dir.file("state")});
    BOOST_REQUIRE_MESSAGE(wait_for_listening(socket, 10s),
                          "systemd-socket-activate made no listening socket");
    // Nobody has connected: the server has not started, and says nothing.
    BOOST_CHECK_EQUAL(program_of(manager.pid()), "systemd-socket-activate");
    BOOST_CHECK_EQUAL(notify.next(200ms), "");

    const ProgramResult played = run_program({bin("audiod-test-client"), "--signal", "random",
                                              "--seed", "5", "--frames", "24000", "--app", "first"},
                                             60s);
    BOOST_CHECK_MESSAGE(played.status == 0, played.err);
    const std::string ready = notify.next(10s);
    BOOST_CHECK_MESSAGE(ready.find("READY=1") != std::string::npos, "got: " << ready);
    BOOST_CHECK_MESSAGE(ready.find("MAINPID=" + std::to_string(manager.pid())) != std::string::npos,
                        ready);
    BOOST_CHECK_EQUAL(program_of(manager.pid()), "audiod");
    const ProgramResult info = run_tool("audioctl", {"info"});
    BOOST_CHECK_MESSAGE(info.status == 0 && info.out.find("pid " + std::to_string(manager.pid())) !=
                                                std::string::npos,
                        info.out << info.err);

    ::kill(manager.pid(), SIGTERM);
    const std::string stopping = notify.next(10s);
    BOOST_CHECK_MESSAGE(stopping.find("STOPPING=1") != std::string::npos, "got: " << stopping);
    const ProgramResult ended = manager.finish(20s);
    BOOST_CHECK_MESSAGE(ended.status == 0, ended.err);
    BOOST_CHECK_MESSAGE(ended.err.find("serving passed socket=" + socket) != std::string::npos,
                        ended.err);
    // The socket belongs to the manager, which would start the next server on it.
    BOOST_CHECK(::access(socket.c_str(), F_OK) == 0);

    // What the first client played came out, sample for sample.
    const auto start = json_number(played.out, "start");
    BOOST_REQUIRE_MESSAGE(start, played.out);
    const auto out = read_wav_s16(wav);
    const auto expected = make_signal("random", 24000, 2, 5, 0);
    BOOST_REQUIRE_GE(out.size(), *start * 2 + expected.size());
    BOOST_CHECK(std::equal(expected.begin(), expected.end(), out.begin() + *start * 2));
}

BOOST_AUTO_TEST_CASE(a_passed_stream_socket_is_refused_with_the_unit_setting_to_use) {
    TempDir dir;
    const std::string socket = dir.file("socket");
    { std::ofstream(dir.file("audiod.conf")) << file_sink_config(dir.file("out.wav")); }
    // ListenStream= instead of ListenSequentialPacket=: a stream socket.
    BackgroundProgram manager({installed("systemd-socket-activate"), "-l", socket, "--",
                               bin("audiod"), "--config", dir.file("audiod.conf"), "--state",
                               dir.file("state")});
    BOOST_REQUIRE(wait_for_listening(socket, 10s));
    const int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_un address{};
    address.sun_family = AF_UNIX;
    std::memcpy(address.sun_path, socket.c_str(), socket.size() + 1);
    BOOST_REQUIRE(::connect(fd, reinterpret_cast<const sockaddr*>(&address), sizeof address) == 0);
    const ProgramResult ended = manager.finish(20s);
    ::close(fd);
    BOOST_CHECK_EQUAL(ended.status, 1);
    BOOST_CHECK_MESSAGE(ended.err.find("not SOCK_SEQPACKET") != std::string::npos &&
                            ended.err.find("ListenSequentialPacket=") != std::string::npos,
                        ended.err);
}

// The user unit's hardening leaves audiod what low latency needs: applied
// as systemd applies it (audiod-unit-sandbox: the unit's seccomp filters and
// no-new-privileges, since these machines have no systemd as PID 1 to run
// the unit), the server's sink threads get SCHED_FIFO and its memory is
// locked where the user's limits permit, and it plays. The same sandbox
// with RestrictRealtime=yes added takes SCHED_FIFO away: the check can fail.
BOOST_AUTO_TEST_CASE(the_units_sandbox_leaves_real_time_scheduling_and_locked_memory) {
    BOOST_REQUIRE_MESSAGE(::geteuid() == 0, "this test needs root's CAP_SYS_NICE (see "
                                            "info_in_sandbox); CI runs as root");
    TempDir dir;
    const std::string units = std::string(AUDIOD_SOURCE_DIR) + "/conf/systemd/";
    const std::string user = info_in_sandbox(units + "audiod.service.in", dir, "user");
    says(user, "scheduling", "SCHED_FIFO priority 20");
    says(user, "memory", "locked");
    const std::string system = info_in_sandbox(units + "audiod-system.service.in", dir, "system",
                                               {"--system", "--group", "audio"});
    says(system, "scheduling", "SCHED_FIFO priority 20");
    says(system, "memory", "locked");

    std::stringstream text;
    text << std::ifstream(units + "audiod.service.in").rdbuf();
    std::string restricted = text.str();
    const auto service = restricted.find("[Service]\n");
    BOOST_REQUIRE(service != std::string::npos);
    restricted.insert(service + std::strlen("[Service]\n"), "RestrictRealtime=yes\n");
    std::ofstream(dir.file("restricted.service")) << restricted;
    says(info_in_sandbox(dir.file("restricted.service"), dir, "restricted"), "scheduling",
         "SCHED_OTHER");
}

BOOST_AUTO_TEST_SUITE_END()
