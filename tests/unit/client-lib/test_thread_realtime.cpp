// audiod_make_thread_realtime: SCHED_FIFO where the system permits it, the
// RLIMIT_RTPRIO limit where that is lower than asked, a clear refusal where
// nothing is permitted. Each case runs in a child process, which may lower
// its own limits and, when it runs as root, give up root (as a user without
// the privilege would be).
#include "audiod/audiod.h"
#include "realtime.h"

#include <boost/test/unit_test.hpp>

#include <pthread.h>
#include <sched.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

namespace {

constexpr uid_t kNobody = 65534;

// What the calling thread's scheduling is, packed for an exit status:
// policy * 100 + priority.
int scheduling_now() {
    int policy = 0;
    sched_param param{};
    pthread_getschedparam(pthread_self(), &policy, &param);
    return (policy & ~SCHED_RESET_ON_FORK) * 100 + param.sched_priority;
}

// Runs `body` in a child; returns its exit status, or -1.
template <class Body>
int in_child(Body body) {
    const pid_t pid = ::fork();
    if (pid == 0) {
        ::_exit(body());
    }
    int status = 0;
    if (pid < 0 || ::waitpid(pid, &status, 0) != pid || !WIFEXITED(status)) {
        return -1;
    }
    return WEXITSTATUS(status);
}

// Leaves the child with an RLIMIT_RTPRIO of 0 and without root.
bool as_user_without_rtprio() {
    const rlimit none{0, 0};
    if (::setrlimit(RLIMIT_RTPRIO, &none) != 0) {
        return false;
    }
    if (::geteuid() == 0) {
        return ::setgid(kNobody) == 0 && ::setuid(kNobody) == 0;
    }
    return true;
}

} // namespace

BOOST_AUTO_TEST_SUITE(thread_realtime)

BOOST_AUTO_TEST_CASE(out_of_range_priorities_are_invalid) {
    BOOST_CHECK_EQUAL(audiod_make_thread_realtime(-1), AUDIOD_E_INVALID);
    BOOST_CHECK_EQUAL(audiod_make_thread_realtime(100), AUDIOD_E_INVALID);
}

BOOST_AUTO_TEST_CASE(without_permission_it_is_refused_and_the_thread_stays_as_it_was) {
    const int status = in_child([] {
        if (!as_user_without_rtprio()) {
            return 1;
        }
        if (audiod_make_thread_realtime(0) != AUDIOD_E_REFUSED) {
            return 2;
        }
        return scheduling_now() == SCHED_OTHER * 100 ? 0 : 3;
    });
    BOOST_CHECK_EQUAL(status, 0);
}

// Raising RLIMIT_RTPRIO takes CAP_SYS_RESOURCE, which the test machines'
// root lacks, so the limit's part is checked as the arithmetic it is.
BOOST_AUTO_TEST_CASE(an_rtprio_limit_below_the_priority_asked_is_used_instead) {
    using audiod::client::fallback_rt_priority;
    BOOST_CHECK_EQUAL(fallback_rt_priority(15, 10), 10);
    BOOST_CHECK_EQUAL(fallback_rt_priority(15, 1), 1);
    BOOST_CHECK_EQUAL(fallback_rt_priority(15, 0), 0);  // none permitted
    BOOST_CHECK_EQUAL(fallback_rt_priority(15, 15), 0); // 15 itself was refused
    BOOST_CHECK_EQUAL(fallback_rt_priority(15, 95), 0);
    BOOST_CHECK_EQUAL(fallback_rt_priority(15, RLIM_INFINITY), 0);
}

BOOST_AUTO_TEST_CASE(where_permitted_the_thread_runs_sched_fifo_at_the_priority_asked) {
    rlimit limit{};
    BOOST_REQUIRE_EQUAL(::getrlimit(RLIMIT_RTPRIO, &limit), 0);
    BOOST_REQUIRE_MESSAGE(::geteuid() == 0 || limit.rlim_max == RLIM_INFINITY,
                          "needs root, or no RLIMIT_RTPRIO hard limit");
    const int status = in_child([] {
        const rlimit enough{RLIM_INFINITY, RLIM_INFINITY};
        if (::geteuid() != 0 && ::setrlimit(RLIMIT_RTPRIO, &enough) != 0) {
            return 1;
        }
        if (audiod_make_thread_realtime(0) != AUDIOD_CLIENT_RT_PRIORITY) {
            return 2;
        }
        if (scheduling_now() != SCHED_FIFO * 100 + AUDIOD_CLIENT_RT_PRIORITY) {
            return 3;
        }
        return audiod_make_thread_realtime(7) == 7 && scheduling_now() == SCHED_FIFO * 100 + 7 ? 0
                                                                                               : 4;
    });
    BOOST_CHECK_EQUAL(status, 0);
}

BOOST_AUTO_TEST_SUITE_END()
