// CPU time and context switches of a process, from /proc, for benchmarks.
#pragma once

#include <sys/types.h>

namespace audiod::bench {

struct ProcStats {
    double cpu_seconds = 0;          // user + system, all threads
    unsigned long long switches = 0; // voluntary + involuntary, all threads
};

// Reads /proc/PID; a missing process reads as zeros.
ProcStats read_proc_stats(pid_t pid);

} // namespace audiod::bench
