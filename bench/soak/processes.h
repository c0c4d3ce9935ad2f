// Child processes for the soak: the server, players, audioctl.
#pragma once

#include <string>
#include <sys/types.h>
#include <vector>

namespace audiod::soak {

// Starts ARGV (argv[0] a path) with its standard output and error to
// `log` (appended; /dev/null if empty). -1 if it could not be started.
pid_t spawn(const std::vector<std::string>& argv, const std::string& log = "");

// Runs ARGV to its end (killed after `limit_ms`); returns its exit status
// (128+signal if killed) and puts its standard output and error in `out`.
int run(const std::vector<std::string>& argv, std::string& out, int limit_ms = 10000);

// Waits up to `limit_ms` for PID to end; its status, or -1 if it has not.
int wait_for(pid_t pid, int limit_ms);

// Counts of a live process, from /proc (0 where it is gone).
struct Footprint {
    long fds = 0;
    long threads = 0;
    long rss_kib = 0;
};
Footprint footprint(pid_t pid);

} // namespace audiod::soak
