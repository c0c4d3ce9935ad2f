// Server logging: one line per message on stderr,
//   audiod: LEVEL component: message key=value ...
// Levels: error (something failed and was not recovered), warning (recovered,
// or refused bad input), info (lifecycle: start, stop, clients, streams),
// debug (per-request detail). Thread: any except rt (this takes a lock and
// formats text; the RT thread posts events instead).
#pragma once

#include <string_view>

namespace audiod {

enum class LogLevel { error = 0, warning = 1, info = 2, debug = 3 };

void set_log_level(LogLevel level) noexcept;
[[nodiscard]] LogLevel log_level() noexcept;
void log_message(LogLevel level, std::string_view component, std::string_view message);

inline void log_error(std::string_view component, std::string_view message) {
    log_message(LogLevel::error, component, message);
}
inline void log_warning(std::string_view component, std::string_view message) {
    log_message(LogLevel::warning, component, message);
}
inline void log_info(std::string_view component, std::string_view message) {
    log_message(LogLevel::info, component, message);
}
inline void log_debug(std::string_view component, std::string_view message) {
    log_message(LogLevel::debug, component, message);
}

} // namespace audiod
