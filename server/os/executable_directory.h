// Where the running executable lives, so that what it ships with (modules,
// the default configuration) is found beside it in the build tree as once
// installed.
#pragma once

#include <string>

namespace audiod {

// The directory holding the running executable (from /proc/self/exe), or
// "." if it cannot be read.
[[nodiscard]] std::string executable_directory();

} // namespace audiod
