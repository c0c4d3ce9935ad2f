// toml++, included safely for hostile input. Include this, never
// <toml++/toml.h> directly.
//
// toml++ 3.3 (Debian 12) guards some parser invariants with
// TOML_ASSERT_ASSUME, which is assert() in debug builds and
// __builtin_assume() in clang release builds. Input such as "[\x05" breaks
// the invariant in parse_key(); the code right after the assertion rejects
// it with a proper parse error, but an assume would let the optimiser delete
// that check (undefined behaviour) and a debug assert aborts the server.
// Found by tests/fuzz/fuzz_config. Turning both into no-ops keeps toml++'s
// own error handling in charge.
#pragma once

#include <toml++/impl/preprocessor.h>

#undef TOML_ASSUME
#define TOML_ASSUME(...) static_assert(true)
#undef TOML_ASSERT
#define TOML_ASSERT(expr) static_assert(true)
#undef TOML_ASSERT_ASSUME
#define TOML_ASSERT_ASSUME(expr) static_assert(true)

#include <toml++/toml.h>
