#include "processes.h"

#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <dirent.h>
#include <fcntl.h>
#include <fstream>
#include <spawn.h>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>

extern char** environ;

namespace audiod::soak {

namespace {

pid_t spawn_to(const std::vector<std::string>& argv, int out_fd, int err_fd) {
    std::vector<char*> args;
    for (const std::string& a : argv) {
        args.push_back(const_cast<char*>(a.c_str()));
    }
    args.push_back(nullptr);
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_adddup2(&actions, out_fd, 1);
    posix_spawn_file_actions_adddup2(&actions, err_fd, 2);
    pid_t pid = -1;
    const int rc = posix_spawn(&pid, args[0], &actions, nullptr, args.data(), environ);
    posix_spawn_file_actions_destroy(&actions);
    return rc == 0 ? pid : -1;
}

} // namespace

pid_t spawn(const std::vector<std::string>& argv, const std::string& log) {
    const int fd = ::open(log.empty() ? "/dev/null" : log.c_str(),
                          O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
    if (fd < 0) {
        return -1;
    }
    const pid_t pid = spawn_to(argv, fd, fd);
    ::close(fd);
    return pid;
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
        } else if (line.rfind("VmRSS:", 0) == 0) {
            f.rss_kib = std::atol(line.c_str() + 6);
        }
    }
    return f;
}

} // namespace audiod::soak
