// The tools' --realtime option: the thread that feeds (or drains) the
// stream asks for SCHED_FIFO through libaudiod, and says what it got.
#pragma once

namespace audiod::cli {

// The option's help text, shared by audioplay and audiorec.
inline constexpr const char* kRealtimeHelp =
    "  -r, --realtime[=PRIO]  move the stream's audio from a real-time\n"
    "                         (SCHED_FIFO) thread at PRIO (1-99; default 15,\n"
    "                         below the server's 20), so that a short buffer\n"
    "                         does not underrun on a busy machine. Needs root\n"
    "                         or an RLIMIT_RTPRIO (audiod(8): REAL-TIME\n"
    "                         SCHEDULING); when it is refused, that is said\n"
    "                         and the tool carries on at normal priority.\n";

// The PRIO of --realtime[=PRIO] (0: the default), or a usage error.
int parse_realtime_priority(const char* program, const char* text);

// Makes the calling thread real-time at `priority` (0: the default); says
// so unless `quiet`, and says always when it was refused.
void make_realtime(const char* program, int priority, bool quiet);

} // namespace audiod::cli
