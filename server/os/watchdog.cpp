#include "os/watchdog.h"

#include <array>
#include <atomic>
#include <csignal>
#include <sched.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

namespace audiod {

namespace {

constexpr size_t kMaxRtThreads = 64;
// Long enough that no healthy cycle comes near it (a cycle blocks in its
// device wait every few milliseconds, which resets the kernel's count).
constexpr rlim_t kRtTimeSoftUs = 200'000;

std::array<std::atomic<pid_t>, kMaxRtThreads> g_rt_threads{};
std::atomic<uint64_t> g_demotions{0};

void on_sigxcpu(int) {
    // Only raw syscalls and atomics here: this runs in signal context.
    for (auto& slot : g_rt_threads) {
        const pid_t tid = slot.load(std::memory_order_relaxed);
        if (tid != 0) {
            demote_thread(tid);
        }
    }
    g_demotions.fetch_add(1, std::memory_order_relaxed);
}

std::string describe(rlim_t value) {
    return value == RLIM_INFINITY ? "unlimited" : std::to_string(value / 1000) + " ms";
}

} // namespace

std::string install_rt_time_guard() {
    struct sigaction action {};
    action.sa_handler = on_sigxcpu;
    sigemptyset(&action.sa_mask);
    action.sa_flags = SA_RESTART;
    sigaction(SIGXCPU, &action, nullptr);

    rlimit limit{};
    if (getrlimit(RLIMIT_RTTIME, &limit) != 0) {
        return "RLIMIT_RTTIME unavailable";
    }
    // Leave the hard limit alone; put the soft limit where demotion happens
    // long before the hard limit's SIGKILL could.
    rlim_t soft = kRtTimeSoftUs;
    if (limit.rlim_max != RLIM_INFINITY) {
        soft = std::min<rlim_t>(soft, limit.rlim_max / 2);
    }
    limit.rlim_cur = soft;
    if (setrlimit(RLIMIT_RTTIME, &limit) != 0) {
        return "RLIMIT_RTTIME not set";
    }
    return "RLIMIT_RTTIME soft " + describe(limit.rlim_cur) + ", hard " + describe(limit.rlim_max);
}

int register_rt_thread() noexcept {
    const auto tid = static_cast<pid_t>(::syscall(SYS_gettid));
    for (size_t i = 0; i < g_rt_threads.size(); ++i) {
        pid_t empty = 0;
        if (g_rt_threads[i].compare_exchange_strong(empty, tid)) {
            return static_cast<int>(i);
        }
    }
    return -1;
}

void unregister_rt_thread(int slot) noexcept {
    if (slot >= 0 && static_cast<size_t>(slot) < g_rt_threads.size()) {
        g_rt_threads[static_cast<size_t>(slot)].store(0);
    }
}

bool demote_thread(pid_t tid) noexcept {
    const bool was_realtime = is_realtime(tid);
    sched_param param{};
    param.sched_priority = 0;
    ::syscall(SYS_sched_setscheduler, tid, SCHED_OTHER, &param);
    return was_realtime;
}

bool is_realtime(pid_t tid) noexcept {
    const long policy = ::syscall(SYS_sched_getscheduler, tid);
    if (policy < 0) {
        return false;
    }
    const long base = policy & ~static_cast<long>(SCHED_RESET_ON_FORK);
    return base == SCHED_FIFO || base == SCHED_RR;
}

uint64_t rt_time_demotions() noexcept {
    return g_demotions.load(std::memory_order_relaxed);
}

} // namespace audiod
