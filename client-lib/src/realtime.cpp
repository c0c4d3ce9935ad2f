// Real-time scheduling for a player's feeding thread, asked of the kernel
// directly: no rtkit, no D-Bus. The kernel allows SCHED_FIFO to root
// (CAP_SYS_NICE) and, up to RLIMIT_RTPRIO, to anyone else, which is what
// /etc/security/limits.d grants the `audio` group.
#include "realtime.h"

#include "audiod/audiod.h"

#include <pthread.h>
#include <sched.h>
#include <sys/resource.h>

namespace {

int try_fifo(int priority) {
    sched_param param{};
    param.sched_priority = priority;
    // SCHED_RESET_ON_FORK: a child the thread starts does not inherit it.
    return pthread_setschedparam(pthread_self(), SCHED_FIFO | SCHED_RESET_ON_FORK, &param);
}

} // namespace

extern "C" int audiod_make_thread_realtime(int priority) {
    const int highest = sched_get_priority_max(SCHED_FIFO);
    if (priority < 0 || priority > highest) {
        return AUDIOD_E_INVALID;
    }
    const int wanted = priority == 0 ? AUDIOD_CLIENT_RT_PRIORITY : priority;
    if (try_fifo(wanted) == 0) {
        return wanted;
    }
    // Without the privilege, as high as RLIMIT_RTPRIO allows.
    rlimit limit{};
    const int allowed = ::getrlimit(RLIMIT_RTPRIO, &limit) == 0
                            ? audiod::client::fallback_rt_priority(wanted, limit.rlim_cur)
                            : 0;
    return allowed > 0 && try_fifo(allowed) == 0 ? allowed : AUDIOD_E_REFUSED;
}
