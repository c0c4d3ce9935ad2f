// A pre-check for TOML text before toml++ sees it.
//
// toml++ 3.3 (Debian 12) reaches __builtin_unreachable() — undefined
// behaviour — when its whitespace test meets many non-ASCII code points
// (U+00A1..U+0499 among them), which it does for such characters outside
// strings, after a backslash in a string, and in multi-line basic strings.
// TOML 1.0 allows non-ASCII only inside strings and comments anyway, so this
// scanner rejects it everywhere else (and, to stay clear of the bug, in
// multi-line basic strings and directly after a backslash) with a line
// number, before the parser runs. Found by tests/fuzz/fuzz_config.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace audiod {

struct TomlGuardError {
    unsigned line = 0;
    std::string reason;
};

// nullopt if `text` is safe to hand to toml++.
[[nodiscard]] std::optional<TomlGuardError> check_toml_text(std::string_view text);

} // namespace audiod
