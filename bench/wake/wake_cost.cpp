// audiod-wake-cost: what one wake-up a cycle costs a player on this machine,
// whatever the player then does. N processes do nothing but wake once a
// quantum and go back to sleep, the two ways a libaudiod player can be
// woken, and each reports the CPU time it was charged per wake-up:
//   timer     the player's own timeout (epoll_pwait2 on an epoll set holding
//             an eventfd, to absolute cycle times), as a self-timed writer
//             waits;
//   signalled blocked in epoll_wait until another process (the "server",
//             itself timer-paced) writes its eventfd each cycle, as a player
//             woken by the server waits.
// A player's cost per stream can never fall below this figure times the
// wake-ups it needs, so it is the floor to read the client figures of the
// side-by-side reports in bench/results/ against. For the signalled case it also
// prints what each signal costs the server; for both, how often a player
// was moved to another CPU (a cold cache is part of a wake-up's cost).
//   audiod-wake-cost [--quantum FRAMES] [--rate HZ] [--seconds S] [--players N]
#include <cerrno>
#include <csignal>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>
#include <vector>

namespace {

constexpr int64_t kNsPerSecond = 1'000'000'000;

int64_t read_clock(clockid_t id) {
    timespec t{};
    clock_gettime(id, &t);
    return int64_t{t.tv_sec} * kNsPerSecond + t.tv_nsec;
}

timespec to_timespec(int64_t ns) {
    return timespec{static_cast<time_t>(ns / kNsPerSecond), static_cast<long>(ns % kNsPerSecond)};
}

struct Options {
    int64_t period_ns = 0;
    int64_t cycles = 0;
    int players = 8;
};

// What each player writes back to its parent through shared memory.
struct Result {
    int64_t cpu_ns = 0;
    int64_t wakes = 0;
    int64_t migrations = 0; // moves to another CPU, as the scheduler counts them
};

// This process's se.nr_migrations (/proc/self/sched), or 0 if unreadable.
int64_t migrations() {
    FILE* sched = std::fopen("/proc/self/sched", "r");
    if (sched == nullptr) {
        return 0;
    }
    char line[256];
    long long count = 0;
    while (std::fgets(line, sizeof line, sched) != nullptr) {
        if (std::sscanf(line, " se.nr_migrations : %lld", &count) == 1) {
            break;
        }
    }
    std::fclose(sched);
    return count;
}

int make_epoll_with(int fd) {
    const int ep = epoll_create1(EPOLL_CLOEXEC);
    epoll_event event{};
    event.events = EPOLLIN;
    if (ep < 0 || epoll_ctl(ep, EPOLL_CTL_ADD, fd, &event) != 0) {
        std::perror("audiod-wake-cost: epoll");
        std::exit(1);
    }
    return ep;
}

// A self-timed player: its own timeout to each cycle, an eventfd watched
// beside it that nobody writes.
void timer_player(const Options& options, int64_t base, Result* result) {
    const int quiet = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
    const int ep = make_epoll_with(quiet);
    const int64_t cpu_before = read_clock(CLOCK_THREAD_CPUTIME_ID);
    for (int64_t k = 1; k <= options.cycles; ++k) {
        const int64_t left = base + k * options.period_ns - read_clock(CLOCK_MONOTONIC);
        const timespec timeout = to_timespec(left > 0 ? left : 0);
        epoll_event event{};
        epoll_pwait2(ep, &event, 1, &timeout, nullptr);
    }
    result->cpu_ns = read_clock(CLOCK_THREAD_CPUTIME_ID) - cpu_before;
    result->wakes = options.cycles;
    result->migrations = migrations();
}

// A signalled player: no timeout, woken by the server's eventfd write.
void signalled_player(int signal_fd, int64_t cycles, Result* result) {
    const int ep = make_epoll_with(signal_fd);
    const int64_t cpu_before = read_clock(CLOCK_THREAD_CPUTIME_ID);
    int64_t wakes = 0;
    for (int64_t seen = 0; seen < cycles;) {
        epoll_event event{};
        if (epoll_wait(ep, &event, 1, -1) < 0) {
            continue;
        }
        uint64_t count = 0;
        if (read(signal_fd, &count, sizeof count) == sizeof count) {
            seen += static_cast<int64_t>(count);
            ++wakes;
        }
    }
    result->cpu_ns = read_clock(CLOCK_THREAD_CPUTIME_ID) - cpu_before;
    result->wakes = wakes;
    result->migrations = migrations();
}

// The server of the signalled case: timer-paced, one write per player per
// cycle. Returns the CPU it spent.
int64_t signalling_server(const Options& options, int64_t base, const std::vector<int>& fds) {
    const int64_t cpu_before = read_clock(CLOCK_THREAD_CPUTIME_ID);
    for (int64_t k = 1; k <= options.cycles; ++k) {
        const timespec deadline = to_timespec(base + k * options.period_ns);
        while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &deadline, nullptr) == EINTR) {
        }
        for (const int fd : fds) {
            eventfd_write(fd, 1);
        }
    }
    return read_clock(CLOCK_THREAD_CPUTIME_ID) - cpu_before;
}

struct Cost {
    double player_ns = 0;  // a player's CPU per wake-up
    double server_ns = 0;  // the server's CPU per cycle, sleep included
    double migrations = 0; // a player's moves to another CPU per wake-up
};

// Runs N players of one kind.
Cost run(const Options& options, bool signalled) {
    auto* results =
        static_cast<Result*>(mmap(nullptr, sizeof(Result) * options.players, PROT_READ | PROT_WRITE,
                                  MAP_SHARED | MAP_ANONYMOUS, -1, 0));
    if (results == MAP_FAILED) {
        std::perror("audiod-wake-cost: mmap");
        std::exit(1);
    }
    std::vector<int> fds;
    for (int i = 0; i < options.players && signalled; ++i) {
        fds.push_back(eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK));
    }
    // Everybody starts on the same timeline, 100 ms from now.
    const int64_t base = read_clock(CLOCK_MONOTONIC) + kNsPerSecond / 10;
    std::vector<pid_t> children;
    for (int i = 0; i < options.players; ++i) {
        const pid_t pid = fork();
        if (pid < 0) {
            std::perror("audiod-wake-cost: fork");
            std::exit(1);
        }
        if (pid == 0) {
            if (signalled) {
                signalled_player(fds[static_cast<size_t>(i)], options.cycles, &results[i]);
            } else {
                timer_player(options, base, &results[i]);
            }
            _exit(0);
        }
        children.push_back(pid);
    }
    Cost cost;
    if (signalled) {
        cost.server_ns = static_cast<double>(signalling_server(options, base, fds)) /
                         static_cast<double>(options.cycles);
    }
    for (const pid_t pid : children) {
        waitpid(pid, nullptr, 0);
    }
    int64_t cpu = 0;
    int64_t wakes = 0;
    int64_t migrated = 0;
    for (int i = 0; i < options.players; ++i) {
        cpu += results[i].cpu_ns;
        wakes += results[i].wakes;
        migrated += results[i].migrations;
    }
    munmap(results, sizeof(Result) * options.players);
    for (const int fd : fds) {
        close(fd);
    }
    if (wakes > 0) {
        cost.player_ns = static_cast<double>(cpu) / static_cast<double>(wakes);
        cost.migrations = static_cast<double>(migrated) / static_cast<double>(wakes);
    }
    return cost;
}

} // namespace

int main(int argc, char** argv) {
    int64_t quantum = 64;
    int64_t rate = 48000;
    double seconds = 10;
    Options options;
    for (int i = 1; i < argc; ++i) {
        const bool has_value = i + 1 < argc;
        if (std::strcmp(argv[i], "--quantum") == 0 && has_value) {
            quantum = std::atoll(argv[++i]);
        } else if (std::strcmp(argv[i], "--rate") == 0 && has_value) {
            rate = std::atoll(argv[++i]);
        } else if (std::strcmp(argv[i], "--seconds") == 0 && has_value) {
            seconds = std::atof(argv[++i]);
        } else if (std::strcmp(argv[i], "--players") == 0 && has_value) {
            options.players = std::atoi(argv[++i]);
        } else {
            std::fprintf(stderr,
                         "usage: audiod-wake-cost [--quantum FRAMES] [--rate HZ] [--seconds S] "
                         "[--players N]\n");
            return 2;
        }
    }
    if (quantum <= 0 || rate <= 0 || seconds <= 0 || options.players <= 0) {
        std::fprintf(stderr, "audiod-wake-cost: quantum, rate, seconds and players must be > 0\n");
        return 2;
    }
    options.period_ns = quantum * kNsPerSecond / rate;
    options.cycles = static_cast<int64_t>(seconds * 1e9 / static_cast<double>(options.period_ns));
    const double wakes_per_second = 1e9 / static_cast<double>(options.period_ns);
    std::printf("%d players waking every %lld frames at %lld Hz (%.0f a second), %.0f s each:\n",
                options.players, static_cast<long long>(quantum), static_cast<long long>(rate),
                wakes_per_second, seconds);
    for (const bool signalled : {false, true}) {
        const Cost cost = run(options, signalled);
        std::printf("  %-9s player %5.2f us a wake-up = %.2f %% of a core, moved to another CPU "
                    "after %.1f %% of its wake-ups",
                    signalled ? "signalled" : "timer", cost.player_ns / 1000,
                    cost.player_ns * wakes_per_second / 1e7, cost.migrations * 100);
        if (signalled) {
            std::printf("; server %.2f us a cycle for %d signals = %.2f %% of a core",
                        cost.server_ns / 1000, options.players,
                        cost.server_ns * wakes_per_second / 1e7);
        }
        std::printf("\n");
    }
    return 0;
}
