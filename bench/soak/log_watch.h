// Reads the server's log as it grows and stamps each warning and error
// line with when it was read, so that the verdict can ask of each whether
// an event explains it: the log itself carries no times.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace audiod::soak {

class LogWatch {
public:
    explicit LogWatch(std::string path)
        : path_(std::move(path)) {}

    struct Line {
        double at_s; // when it was read: a little after it was written
        std::string text;
        bool error; // else a warning
        bool stall; // the watchdog: an RT thread completed no cycle in its bound
    };
    // Reads what was written since the last call (a line cut short is
    // read whole at the next), stamping each complaint with `now_s`.
    void poll(double now_s);
    [[nodiscard]] const std::vector<Line>& complaints() const { return complaints_; }
    [[nodiscard]] uint64_t lines() const { return lines_; }

private:
    std::string path_;
    uint64_t offset_ = 0;
    std::string partial_;
    uint64_t lines_ = 0;
    std::vector<Line> complaints_;
};

} // namespace audiod::soak
