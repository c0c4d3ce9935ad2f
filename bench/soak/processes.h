// Child processes for the soak: the server, players, audioctl.
#pragma once

#include <map>
#include <string>
#include <sys/types.h>
#include <vector>

namespace audiod::soak {

// Starts ARGV (argv[0] a path) with its standard output and error to
// `log` (appended; /dev/null if empty), and `pass_fd`, if given, as its
// descriptor 3 (socket activation). -1 if it could not be started.
pid_t spawn(const std::vector<std::string>& argv, const std::string& log = "", int pass_fd = -1);

// Starts ARGV with `in` as its standard input and `out` as its standard
// output (/dev/null for -1), its standard error to /dev/null, and `env`
// ("KEY=VALUE") set in its environment.
pid_t spawn_with_stdio(const std::vector<std::string>& argv, int in, int out,
                       const std::vector<std::string>& env = {});

// A listening SOCK_SEQPACKET socket at PATH, as a service manager makes
// audiod's: it outlives each server it is passed to, so clients that
// connect while none runs wait in its queue. -1 on failure.
int listen_at(const std::string& path);

// Runs ARGV to its end (killed after `limit_ms`); returns its exit status
// (128+signal if killed) and puts its standard output and error in `out`.
int run(const std::vector<std::string>& argv, std::string& out, int limit_ms = 10000);

// Waits up to `limit_ms` for PID to end; its status, or -1 if it has not.
int wait_for(pid_t pid, int limit_ms);

// Ends PID (if > 0): SIGTERM, then SIGKILL if it has not ended within
// `grace_ms`; its status (128 + 9 if it had to be killed).
int end_process(pid_t pid, int grace_ms);

// Counts of a live process, from /proc (0 where it is gone).
struct Footprint {
    long fds = 0;
    long threads = 0;
    long anon_kib = 0; // resident and anonymous: the heap, not mapped files or
                       // JACK's shared memory (touched as its graph runs)
};
Footprint footprint(pid_t pid);
// What a process's descriptors are, counted by kind ("socket", "memfd",
// "anon_inode:[eventfd]", a file's folder...): for a leak's report.
std::map<std::string, int> descriptor_kinds(pid_t pid);

} // namespace audiod::soak
