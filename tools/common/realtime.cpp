#include "realtime.h"

#include "audiod/audiod.h"
#include "cli.h"

#include <cstdio>

namespace audiod::cli {

int parse_realtime_priority(const char* program, const char* text) {
    return text == nullptr ? 0 : static_cast<int>(parse_uint(program, text, "priority", 1, 99));
}

void make_realtime(const char* program, int priority, bool quiet) {
    const int got = audiod_make_thread_realtime(priority);
    if (got > 0) {
        if (!quiet) {
            std::fprintf(stderr, "%s: real-time (SCHED_FIFO) priority %d\n", program, got);
        }
        return;
    }
    std::fprintf(stderr,
                 "%s: real-time scheduling refused (%s): not root, and RLIMIT_RTPRIO is 0; "
                 "going on at normal priority\n",
                 program, audiod_strerror(got));
}

} // namespace audiod::cli
