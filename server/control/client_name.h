// Names a client supplies (the application name in Hello), and the
// executable name read from /proc: made safe to show and store.
#pragma once

#include <string>

namespace audiod {

// Valid UTF-8 without control characters (each bad byte or sequence
// becomes '?'), at most 64 bytes.
[[nodiscard]] std::string sanitize_name(const std::string& raw);

} // namespace audiod
