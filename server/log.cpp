#include "log.h"

#include <atomic>
#include <cstdio>
#include <mutex>
#include <string>

namespace audiod {

namespace {

std::atomic<LogLevel> g_level{LogLevel::info};
std::mutex g_mutex;

const char* level_name(LogLevel level) {
    switch (level) {
    case LogLevel::error:
        return "error";
    case LogLevel::warning:
        return "warning";
    case LogLevel::info:
        return "info";
    case LogLevel::debug:
        return "debug";
    }
    return "?";
}

} // namespace

void set_log_level(LogLevel level) noexcept {
    g_level.store(level);
}
LogLevel log_level() noexcept {
    return g_level.load();
}

void log_message(LogLevel level, std::string_view component, std::string_view message) {
    if (level > g_level.load(std::memory_order_relaxed)) {
        return;
    }
    std::string line = "audiod: ";
    line += level_name(level);
    line += ' ';
    line += component;
    line += ": ";
    line += message;
    line += '\n';
    std::lock_guard lock(g_mutex);
    std::fwrite(line.data(), 1, line.size(), stderr);
}

} // namespace audiod
