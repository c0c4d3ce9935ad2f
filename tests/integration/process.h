// Running real programs from tests: the built audiod in a private directory,
// and tools or fixtures with their output captured and a time limit.
#pragma once

#include <chrono>
#include <map>
#include <memory>
#include <string>
#include <sys/types.h>
#include <vector>

namespace audiod::test {

// The whole content of a file ("" if it cannot be read).
std::string file_contents(const std::string& path);

// Path of a program in the build tree's bin/.
std::string bin(const std::string& name);

// Stops a process (SIGSTOP) and waits until every one of its threads is
// stopped: the signal is only delivered as each thread next runs, and on
// a loaded machine a thread woken by it may still be waiting for a CPU.
// False if that has not happened within `limit`.
bool stop_process(pid_t pid, std::chrono::milliseconds limit = std::chrono::seconds(10));

struct ProgramResult {
    int status = -1; // exit code, or 128+signal, or -1 if it had to be killed
    std::string out;
    std::string err;
    double seconds = 0;
    double cpu_seconds = 0; // user + system time it used
    // Where each of its threads was (as a killed program's are reported)
    // when it was still running `overdue_after` from its start, if it was.
    std::string overdue;
};

// Runs argv[0] (a path) with `env` added to this process's environment, and
// waits up to `limit`; a program still running then is killed. One still
// running `overdue_after` from its start (when given) is looked at then and
// left to run (ProgramResult::overdue): for a test that bounds how long a
// program may take, and wants to know why a slow one was slow.
ProgramResult run_program(const std::vector<std::string>& argv,
                          std::chrono::milliseconds limit = std::chrono::seconds(30),
                          const std::map<std::string, std::string>& env = {},
                          std::chrono::milliseconds overdue_after = {});

// A child started in the background; finish() collects it like run_program.
class BackgroundProgram {
public:
    explicit BackgroundProgram(const std::vector<std::string>& argv,
                               const std::map<std::string, std::string>& env = {});
    BackgroundProgram(const BackgroundProgram&) = delete;
    ~BackgroundProgram();
    pid_t pid() const { return pid_; }
    // What it has written to standard output so far.
    std::string output_so_far() const;
    // What it has written to standard error so far.
    std::string errors_so_far() const;
    // Whether it has ended (it is reaped only by finish, so finish still
    // reports how).
    bool has_exited() const;
    // Each of its threads, as ServerProcess::threads() (gdb stops it while
    // it looks: call it only once a check has failed).
    std::string threads() const;
    ProgramResult finish(std::chrono::milliseconds limit = std::chrono::seconds(30),
                         std::chrono::milliseconds overdue_after = {});

private:
    pid_t pid_ = -1;
    std::string out_path_;
    std::string err_path_;
    std::chrono::steady_clock::time_point started_;
    bool finished_ = false;
};

// A temporary directory removed (with its contents) at the end.
class TempDir {
public:
    TempDir();
    ~TempDir();
    const std::string& path() const { return path_; }
    std::string file(const std::string& name) const { return path_ + "/" + name; }

private:
    std::string path_;
};

// An audiod process with its own socket, configuration and log, in a
// TempDir. The socket is exported as AUDIOD_SOCKET to this process, so the
// tools and clients the test starts find this server.
class ServerProcess {
public:
    // Starts audiod with `config` (TOML text) and waits until it accepts
    // connections (fails the test after 10 s). With `prefix`, audiod is
    // started by it (a program that execs its arguments: a network
    // namespace's `ip netns exec NS`), and has its pid.
    explicit ServerProcess(const std::string& config, const std::string& dir = "",
                           const std::vector<std::string>& prefix = {});
    ServerProcess(const ServerProcess&) = delete;
    ~ServerProcess();

    const std::string& dir() const { return dir_; }
    const std::string& socket() const { return socket_; }
    pid_t pid() const { return pid_; }
    std::string log() const;

    // Sends `signal` and waits for exit; returns the exit code (128+signal
    // if killed), or -1 on timeout. (30 s: a TSan server on a stress-loaded
    // machine, its log ending in "stopped", once took just over 10 s to be
    // gone.)
    int stop(int signal = 15, std::chrono::milliseconds limit = std::chrono::seconds(30));
    bool running() const { return pid_ > 0; }
    // Each of its threads: state, kernel wait and system call, and gdb's
    // stack (where gdb is installed), for the message of a failure where
    // the server may be stuck on something while it still answers. gdb
    // stops the server while it looks, for over the half second after
    // which its clients take it for stalled and make their streams anew:
    // call it only once a check has failed, never in the message of a
    // BOOST_*_MESSAGE, which is built whether the check passes or not (so
    // placed, it failed six suites under ASan, their streams' ids gone).
    std::string threads() const;

private:
    std::unique_ptr<TempDir> owned_dir_;
    std::string dir_;
    std::string socket_;
    pid_t pid_ = -1;
};

// True once something accepts connections on `socket` (waits up to `limit`).
bool wait_for_socket(const std::string& socket, std::chrono::milliseconds limit);

} // namespace audiod::test
