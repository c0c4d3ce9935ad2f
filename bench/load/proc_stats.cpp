#include "proc_stats.h"

#include <dirent.h>
#include <fstream>
#include <sstream>
#include <string>
#include <unistd.h>

namespace audiod::bench {

namespace {

// Fields 14 and 15 of /proc/PID/stat (utime, stime) in clock ticks; the
// command name (field 2) may contain spaces, so parse after its ')'.
double cpu_seconds(pid_t pid) {
    std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
    std::string line;
    std::getline(in, line);
    const auto close = line.rfind(')');
    if (close == std::string::npos) {
        return 0;
    }
    std::istringstream fields(line.substr(close + 2));
    std::string skip;
    for (int i = 3; i < 14; ++i) {
        fields >> skip;
    }
    unsigned long long utime = 0;
    unsigned long long stime = 0;
    fields >> utime >> stime;
    return static_cast<double>(utime + stime) / static_cast<double>(::sysconf(_SC_CLK_TCK));
}

unsigned long long thread_switches(const std::string& status_path) {
    std::ifstream in(status_path);
    std::string key;
    unsigned long long total = 0;
    while (in >> key) {
        if (key == "voluntary_ctxt_switches:" || key == "nonvoluntary_ctxt_switches:") {
            unsigned long long n = 0;
            in >> n;
            total += n;
        }
    }
    return total;
}

} // namespace

ProcStats read_proc_stats(pid_t pid) {
    ProcStats stats;
    stats.cpu_seconds = cpu_seconds(pid);
    const std::string tasks = "/proc/" + std::to_string(pid) + "/task";
    if (DIR* dir = ::opendir(tasks.c_str())) {
        while (const dirent* entry = ::readdir(dir)) {
            if (entry->d_name[0] != '.') {
                stats.switches += thread_switches(tasks + "/" + entry->d_name + "/status");
            }
        }
        ::closedir(dir);
    }
    return stats;
}

} // namespace audiod::bench
