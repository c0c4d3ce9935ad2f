#include "os/scheduling.h"

#include <cerrno>
#include <pthread.h>
#include <sched.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

namespace audiod {

namespace {
constexpr int kFallbackNice = -11;
}

std::string raise_current_thread_priority(int priority) {
    if (priority > 0) {
        // SCHED_RESET_ON_FORK: a child of this thread must not inherit RT
        // priority it did not ask for.
        sched_param param{};
        param.sched_priority = priority;
        if (pthread_setschedparam(pthread_self(), SCHED_FIFO | SCHED_RESET_ON_FORK, &param) == 0) {
            return "SCHED_FIFO priority " + std::to_string(priority);
        }
    }
    // The nice value is per thread on Linux when addressed by tid.
    const auto tid = static_cast<id_t>(::syscall(SYS_gettid));
    if (::setpriority(PRIO_PROCESS, tid, kFallbackNice) == 0) {
        return "SCHED_OTHER nice " + std::to_string(kFallbackNice);
    }
    errno = 0;
    const int nice_now = ::getpriority(PRIO_PROCESS, tid);
    return "SCHED_OTHER nice " + std::to_string(errno == 0 ? nice_now : 0) +
           " (no permission for more)";
}

} // namespace audiod
