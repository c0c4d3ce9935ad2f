#include "processes.h"

#include <algorithm>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <dirent.h>
#include <fcntl.h>
#include <fstream>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>

extern char** environ;

namespace audiod::soak {

namespace {

pid_t spawn_to(const std::vector<std::string>& argv, int out_fd, int err_fd, int pass_fd = -1) {
    std::vector<char*> args;
    for (const std::string& a : argv) {
        args.push_back(const_cast<char*>(a.c_str()));
    }
    args.push_back(nullptr);
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_adddup2(&actions, out_fd, 1);
    posix_spawn_file_actions_adddup2(&actions, err_fd, 2);
    if (pass_fd >= 0) {
        posix_spawn_file_actions_adddup2(&actions, pass_fd, 3);
    }
    pid_t pid = -1;
    const int rc = posix_spawn(&pid, args[0], &actions, nullptr, args.data(), environ);
    posix_spawn_file_actions_destroy(&actions);
    return rc == 0 ? pid : -1;
}

} // namespace

pid_t spawn(const std::vector<std::string>& argv, const std::string& log, int pass_fd) {
    const int fd = ::open(log.empty() ? "/dev/null" : log.c_str(),
                          O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
    if (fd < 0) {
        return -1;
    }
    const pid_t pid = spawn_to(argv, fd, fd, pass_fd);
    ::close(fd);
    return pid;
}

pid_t spawn_with_stdio(const std::vector<std::string>& argv, int in, int out,
                       const std::vector<std::string>& env) {
    std::vector<char*> args;
    for (const std::string& a : argv) {
        args.push_back(const_cast<char*>(a.c_str()));
    }
    args.push_back(nullptr);
    const int null_fd = ::open("/dev/null", O_RDWR | O_CLOEXEC);
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_adddup2(&actions, in >= 0 ? in : null_fd, 0);
    posix_spawn_file_actions_adddup2(&actions, out >= 0 ? out : null_fd, 1);
    posix_spawn_file_actions_adddup2(&actions, null_fd, 2);
    // This process's environment, with `env`'s settings in place of its
    // own: built here, since setenv while other threads read the
    // environment (libaudiod's, a recorder's spawn) is a race.
    std::vector<std::string> settings = env;
    for (char** e = environ; *e != nullptr; ++e) {
        const std::string entry = *e;
        const std::string key = entry.substr(0, entry.find('=') + 1);
        const bool replaced = std::any_of(env.begin(), env.end(), [&](const std::string& s) {
            return s.compare(0, key.size(), key) == 0;
        });
        if (!replaced) {
            settings.push_back(entry);
        }
    }
    std::vector<char*> envp;
    for (std::string& s : settings) {
        envp.push_back(s.data());
    }
    envp.push_back(nullptr);
    pid_t pid = -1;
    const int rc = posix_spawn(&pid, args[0], &actions, nullptr, args.data(), envp.data());
    posix_spawn_file_actions_destroy(&actions);
    ::close(null_fd);
    return rc == 0 ? pid : -1;
}

int listen_at(const std::string& path) {
    sockaddr_un address{};
    address.sun_family = AF_UNIX;
    if (path.size() >= sizeof address.sun_path) {
        return -1;
    }
    std::memcpy(address.sun_path, path.c_str(), path.size() + 1);
    const int fd = ::socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
    ::unlink(path.c_str());
    if (fd < 0 || ::bind(fd, reinterpret_cast<const sockaddr*>(&address), sizeof address) != 0 ||
        ::listen(fd, 128) != 0) {
        if (fd >= 0) {
            ::close(fd);
        }
        return -1;
    }
    return fd;
}

int wait_for(pid_t pid, int limit_ms) {
    const auto end = std::chrono::steady_clock::now() + std::chrono::milliseconds(limit_ms);
    for (;;) {
        int status = 0;
        const pid_t got = waitpid(pid, &status, WNOHANG);
        if (got == pid) {
            return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
        }
        if (got < 0 || std::chrono::steady_clock::now() >= end) {
            return -1;
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
}

int end_process(pid_t pid, int grace_ms) {
    if (pid <= 0) {
        return -1;
    }
    ::kill(pid, SIGCONT); // a stopped one would not see SIGTERM
    ::kill(pid, SIGTERM);
    const int status = wait_for(pid, grace_ms);
    if (status >= 0) {
        return status;
    }
    ::kill(pid, SIGKILL);
    return wait_for(pid, 10000);
}

int run(const std::vector<std::string>& argv, std::string& out, int limit_ms) {
    out.clear();
    char path[] = "/tmp/audiod-soak-out-XXXXXX";
    const int fd = mkstemp(path);
    if (fd < 0) {
        return -1;
    }
    ::unlink(path);
    const pid_t pid = spawn_to(argv, fd, fd);
    int status = pid < 0 ? -1 : wait_for(pid, limit_ms);
    if (pid > 0 && status < 0) {
        kill(pid, SIGKILL);
        status = wait_for(pid, 5000);
    }
    lseek(fd, 0, SEEK_SET);
    char buffer[4096];
    for (ssize_t n; (n = ::read(fd, buffer, sizeof buffer)) > 0;) {
        out.append(buffer, static_cast<size_t>(n));
    }
    ::close(fd);
    return status;
}

Footprint footprint(pid_t pid) {
    Footprint f;
    const std::string base = "/proc/" + std::to_string(pid);
    if (DIR* dir = opendir((base + "/fd").c_str())) {
        while (const dirent* e = readdir(dir)) {
            f.fds += e->d_name[0] != '.' ? 1 : 0;
        }
        closedir(dir);
    }
    std::ifstream status(base + "/status");
    for (std::string line; std::getline(status, line);) {
        if (line.rfind("Threads:", 0) == 0) {
            f.threads = std::atol(line.c_str() + 8);
        } else if (line.rfind("RssAnon:", 0) == 0) {
            f.anon_kib = std::atol(line.c_str() + 8);
        }
    }
    return f;
}

std::map<std::string, int> descriptor_kinds(pid_t pid) {
    std::map<std::string, int> kinds;
    const std::string base = "/proc/" + std::to_string(pid) + "/fd";
    if (DIR* dir = opendir(base.c_str())) {
        while (const dirent* e = readdir(dir)) {
            if (e->d_name[0] == '.') {
                continue;
            }
            char target[512];
            const ssize_t n =
                ::readlink((base + "/" + e->d_name).c_str(), target, sizeof target - 1);
            std::string kind = n > 0 ? std::string(target, static_cast<size_t>(n)) : "?";
            if (kind.rfind("socket:", 0) == 0) {
                kind = "socket";
            } else if (kind.rfind("/memfd:", 0) == 0) {
                kind = "memfd";
            } else if (kind[0] == '/') {
                kind = kind.substr(0, kind.rfind('/') + 1);
            }
            ++kinds[kind];
        }
        closedir(dir);
    }
    return kinds;
}

} // namespace audiod::soak
