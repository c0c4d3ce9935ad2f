#include "process.h"

#include "protocol/packet_socket.h"

#include <boost/test/results_collector.hpp>
#include <boost/test/unit_test.hpp>

#include <cerrno>
#include <csignal>
#include <cstdlib>
#include <fcntl.h>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>

namespace audiod::test {

std::string file_contents(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    std::ostringstream s;
    s << in.rdbuf();
    return s.str();
}

bool stop_process(pid_t pid, std::chrono::milliseconds limit) {
    if (::kill(pid, SIGSTOP) != 0) {
        return false;
    }
    // /proc/PID/task/TID/stat: "TID (name) STATE ...", the name in
    // parentheses possibly holding spaces.
    const auto all_stopped = [pid] {
        std::error_code error;
        const std::string tasks = "/proc/" + std::to_string(pid) + "/task";
        for (const auto& task : std::filesystem::directory_iterator(tasks, error)) {
            std::ifstream in(task.path() / "stat");
            std::string line;
            std::getline(in, line);
            const size_t close = line.rfind(')');
            if (close == std::string::npos || close + 2 >= line.size() || line[close + 2] != 'T') {
                return false;
            }
        }
        return !error;
    };
    const auto deadline = std::chrono::steady_clock::now() + limit;
    while (!all_stopped()) {
        if (std::chrono::steady_clock::now() > deadline) {
            return false;
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    return true;
}

namespace {

int decode_status(int status) {
    if (WIFEXITED(status)) {
        return WEXITSTATUS(status);
    }
    if (WIFSIGNALED(status)) {
        return 128 + WTERMSIG(status);
    }
    return -1;
}

// Waits for `pid` until `deadline`; returns the decoded status or -2 if it
// is still running. `cpu_seconds`, if given, gets the CPU time it used.
int wait_until(pid_t pid, std::chrono::steady_clock::time_point deadline,
               double* cpu_seconds = nullptr) {
    for (;;) {
        int status = 0;
        rusage usage{};
        const pid_t r = ::wait4(pid, &status, WNOHANG, &usage);
        if (r == pid) {
            if (cpu_seconds != nullptr) {
                *cpu_seconds = double(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) +
                               double(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) / 1e6;
            }
            return decode_status(status);
        }
        if (r < 0 && errno != EINTR) {
            return -1;
        }
        if (std::chrono::steady_clock::now() >= deadline) {
            return -2;
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
}

// Everything the child needs is made before the fork: between fork and
// exec the child of a threaded process may make only async-signal-safe
// calls, since a lock another thread held at the fork (malloc's, the
// environment's, a sanitizer's) stays held in the child for ever. (A TSan
// stress pass once found a player that never ran a line of its own.)
pid_t spawn(const std::vector<std::string>& argv, const std::map<std::string, std::string>& env,
            int in_fd, int out_fd, int err_fd) {
    std::vector<std::string> entries;
    for (char** e = environ; *e != nullptr; ++e) {
        const std::string entry(*e);
        if (env.find(entry.substr(0, entry.find('='))) == env.end()) {
            entries.push_back(entry);
        }
    }
    for (const auto& [k, v] : env) {
        entries.push_back(k + "=" + v);
    }
    std::vector<char*> envp;
    for (std::string& entry : entries) {
        envp.push_back(entry.data());
    }
    envp.push_back(nullptr);
    std::vector<std::string> owned_args = argv;
    std::vector<char*> args;
    for (std::string& a : owned_args) {
        args.push_back(a.data());
    }
    args.push_back(nullptr);
    const std::string exec_failed = "exec " + argv[0] + " failed\n";
    sigset_t none;
    sigemptyset(&none);
    const pid_t test = ::getpid();

    const pid_t pid = ::fork();
    if (pid == 0) {
        // Ends with the test: a test process killed (a ctest timeout, a
        // signal) leaves no server, player or jackd behind to disturb the
        // tests after it. (Tests start programs from their main thread,
        // whose end is what the kernel watches.)
        ::prctl(PR_SET_PDEATHSIG, SIGKILL);
        if (::getppid() != test) {
            ::_exit(127);
        }
        if (in_fd >= 0) {
            ::dup2(in_fd, 0);
        }
        ::dup2(out_fd, 1);
        ::dup2(err_fd, 2);
        // Unblock signals the test runner may have blocked.
        sigprocmask(SIG_SETMASK, &none, nullptr);
        ::execve(args[0], args.data(), envp.data());
        [[maybe_unused]] const ssize_t said = ::write(2, exec_failed.data(), exec_failed.size());
        ::_exit(127);
    }
    return pid;
}

// Where the tests' files go: memory, where the machine has a tmpfs. The
// servers under test fsync their state file, and on a loaded machine a
// disk's journal commit once held one in fsync for over 30 s, so that it
// could not exit (an ASan stress pass): the disk's doing, not the server's,
// which stops without waiting for a slow write.
std::string temp_base() {
    static const std::string base = ::access("/dev/shm", W_OK | X_OK) == 0 ? "/dev/shm" : "/tmp";
    return base;
}

std::string temp_file() {
    std::string path = temp_base() + "/audiod-out-XXXXXX";
    const int fd = ::mkstemp(path.data());
    ::close(fd);
    return path;
}

// Where each thread of a process that overstayed its limit was: its state,
// the kernel function it sleeps in and its system call with arguments
// (/proc/PID/task/TID/syscall), so that a hang says where it hung.
std::string where_threads_are(pid_t pid) {
    std::ostringstream out;
    std::error_code error;
    const std::string tasks = "/proc/" + std::to_string(pid) + "/task";
    for (const auto& task : std::filesystem::directory_iterator(tasks, error)) {
        const std::string dir = task.path().string();
        std::string comm = file_contents(dir + "/comm");
        if (!comm.empty() && comm.back() == '\n') {
            comm.pop_back();
        }
        // The state is the field after the parenthesised name.
        const std::string stat = file_contents(dir + "/stat");
        const size_t close = stat.rfind(')');
        const char state =
            close != std::string::npos && close + 2 < stat.size() ? stat[close + 2] : '?';
        std::string syscall = file_contents(dir + "/syscall");
        if (!syscall.empty() && syscall.back() == '\n') {
            syscall.pop_back();
        }
        out << "\n  thread " << task.path().filename().string() << " (" << comm << ") " << state
            << " in " << file_contents(dir + "/wchan") << ", system call " << syscall;
    }
    return out.str();
}

// Every thread's stack in a process that is stuck, from gdb (which
// scripts/install-deps installs with the test tools); none for a gdb that
// is itself stuck.
std::string stacks_of(pid_t pid, std::chrono::milliseconds limit) {
    static thread_local bool asking = false;
    if (asking || ::access("/usr/bin/gdb", X_OK) != 0) {
        return "(no gdb)";
    }
    asking = true;
    const ProgramResult gdb = run_program(
        {"/usr/bin/gdb", "-p", std::to_string(pid), "-batch", "-ex", "thread apply all bt"}, limit);
    asking = false;
    return gdb.out + gdb.err;
}

} // namespace

std::string bin(const std::string& name) {
    return std::string(AUDIOD_BUILD_DIR) + "/bin/" + name;
}

ProgramResult run_program(const std::vector<std::string>& argv, std::chrono::milliseconds limit,
                          const std::map<std::string, std::string>& env,
                          std::chrono::milliseconds overdue_after) {
    BackgroundProgram program(argv, env);
    return program.finish(limit, overdue_after);
}

BackgroundProgram::BackgroundProgram(const std::vector<std::string>& argv,
                                     const std::map<std::string, std::string>& env)
    : out_path_(temp_file())
    , err_path_(temp_file())
    , started_(std::chrono::steady_clock::now()) {
    const int out = ::open(out_path_.c_str(), O_WRONLY | O_TRUNC | O_CLOEXEC);
    const int err = ::open(err_path_.c_str(), O_WRONLY | O_TRUNC | O_CLOEXEC);
    const int in = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
    pid_ = spawn(argv, env, in, out, err);
    ::close(out);
    ::close(err);
    ::close(in);
}

BackgroundProgram::~BackgroundProgram() {
    if (!finished_) {
        finish(std::chrono::milliseconds(0));
    }
}

ProgramResult BackgroundProgram::finish(std::chrono::milliseconds limit,
                                        std::chrono::milliseconds overdue_after) {
    ProgramResult result;
    const auto deadline = std::chrono::steady_clock::now() + limit;
    result.status = -2;
    if (const auto overdue = started_ + overdue_after;
        overdue_after.count() > 0 && overdue < deadline) {
        result.status = wait_until(pid_, overdue, &result.cpu_seconds);
        if (result.status == -2) {
            // (A program that ends meanwhile is read as a zombie, state Z.)
            result.overdue =
                where_threads_are(pid_) + "\n" + stacks_of(pid_, std::chrono::seconds(30));
        }
    }
    if (result.status == -2) {
        result.status = wait_until(pid_, deadline, &result.cpu_seconds);
    }
    const bool timed_out = result.status == -2;
    std::string threads;
    if (timed_out) {
        threads = where_threads_are(pid_) + "\n" + stacks_of(pid_, std::chrono::seconds(30));
        ::kill(pid_, SIGKILL);
        wait_until(pid_, std::chrono::steady_clock::now() + std::chrono::seconds(5));
        result.status = -1;
    }
    finished_ = true;
    result.seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - started_).count();
    result.out = file_contents(out_path_);
    result.err = file_contents(err_path_);
    if (timed_out) {
        // A failure's message is often this text: say why it is empty.
        result.err += "(killed by the test: still running after " + std::to_string(limit.count()) +
                      " ms;" + threads + ")";
    }
    ::unlink(out_path_.c_str());
    ::unlink(err_path_.c_str());
    return result;
}

std::string BackgroundProgram::output_so_far() const {
    return file_contents(out_path_);
}

std::string BackgroundProgram::errors_so_far() const {
    return file_contents(err_path_);
}

bool BackgroundProgram::has_exited() const {
    if (finished_) {
        return true;
    }
    siginfo_t info{};
    return ::waitid(P_PID, static_cast<id_t>(pid_), &info, WEXITED | WNOHANG | WNOWAIT) == 0 &&
           info.si_pid == pid_;
}

TempDir::TempDir() {
    std::string path = temp_base() + "/audiod-test-XXXXXX";
    BOOST_REQUIRE(::mkdtemp(path.data()) != nullptr);
    path_ = path;
}

TempDir::~TempDir() {
    std::error_code ignored;
    std::filesystem::remove_all(path_, ignored);
}

bool wait_for_socket(const std::string& socket, std::chrono::milliseconds limit) {
    const auto deadline = std::chrono::steady_clock::now() + limit;
    while (std::chrono::steady_clock::now() < deadline) {
        const int fd = proto::connect_seqpacket(socket);
        if (fd >= 0) {
            ::close(fd);
            return true;
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    return false;
}

ServerProcess::ServerProcess(const std::string& config, const std::string& dir,
                             const std::vector<std::string>& prefix) {
    if (dir.empty()) {
        owned_dir_ = std::make_unique<TempDir>();
        dir_ = owned_dir_->path();
    } else {
        dir_ = dir;
    }
    socket_ = dir_ + "/socket";
    { std::ofstream(dir_ + "/audiod.conf") << config; }
    ::setenv("AUDIOD_SOCKET", socket_.c_str(), 1);
    const int log =
        ::open((dir_ + "/audiod.log").c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
    const int in = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
    // The state file stays in the test's directory, never in the real home.
    std::vector<std::string> argv = prefix;
    const std::vector<std::string> audiod = {bin("audiod"), "--config", dir_ + "/audiod.conf",
                                             "--state", dir_ + "/state"};
    argv.insert(argv.end(), audiod.begin(), audiod.end());
    pid_ = spawn(argv, {}, in, log, log);
    ::close(log);
    ::close(in);
    if (!wait_for_socket(socket_, std::chrono::seconds(10))) {
        const std::string text = this->log();
        stop(SIGKILL);
        BOOST_FAIL("audiod did not start:\n" << text);
    }
}

ServerProcess::~ServerProcess() {
    if (pid_ > 0) {
        stop(SIGKILL);
    }
    // A test that failed while this server ran: what the server saw (a
    // watchdog's verdict, a stream made anew, a sink failing) is often the
    // only account of a failure that a loaded machine brings once in many runs.
    namespace ut = boost::unit_test;
    if (ut::results_collector.results(ut::framework::current_test_case().p_id).p_assertions_failed >
        0) {
        std::cerr << "the test has failed; its server's log:\n" << log() << std::endl;
    }
}

std::string ServerProcess::log() const {
    return file_contents(dir_ + "/audiod.log");
}

namespace {

std::string threads_of(pid_t pid) {
    if (pid <= 0) {
        return "(not running)";
    }
    return where_threads_are(pid) + "\n" + stacks_of(pid, std::chrono::seconds(30));
}

} // namespace

std::string ServerProcess::threads() const {
    return threads_of(pid_);
}

std::string BackgroundProgram::threads() const {
    return threads_of(finished_ ? -1 : pid_);
}

int ServerProcess::stop(int signal, std::chrono::milliseconds limit) {
    if (pid_ <= 0) {
        return -1;
    }
    ::kill(pid_, signal);
    int status = wait_until(pid_, std::chrono::steady_clock::now() + limit);
    if (status == -2) {
        // Where it is stuck, before it is killed: every thread's stack (gdb,
        // where installed) and the log.
        std::string stacks = stacks_of(pid_, std::chrono::seconds(60));
        siginfo_t info{};
        if (::waitid(P_PID, static_cast<id_t>(pid_), &info, WEXITED | WNOHANG | WNOWAIT) == 0 &&
            info.si_pid == pid_) {
            stacks += "\n(it ended while they were being taken)";
        }
        BOOST_ERROR("the server did not end within " << limit.count() << " ms of signal " << signal
                                                     << "; its threads:\n"
                                                     << stacks << "\nits log:\n"
                                                     << log());
        ::kill(pid_, SIGKILL);
        wait_until(pid_, std::chrono::steady_clock::now() + std::chrono::seconds(5));
        status = -1;
    }
    if (status > 0 && (signal == SIGTERM || signal == SIGINT)) {
        // A stop that should have been clean was not (a sanitizer's report,
        // an abort): what the server said is the only account of why.
        std::cerr << "audiod (pid " << pid_ << ") ended with status " << status << " on signal "
                  << signal << "; its log:\n"
                  << log() << std::endl;
    }
    pid_ = -1;
    return status;
}

} // namespace audiod::test
