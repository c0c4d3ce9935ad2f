// Replaces a small file atomically: its text goes to PATH.tmp in the same
// directory, which is synced, renamed over PATH, and the directory synced
// too, so a crash or a power cut leaves the old file or the new one, never
// a mixture. Missing parent directories are made (mode 0700). The syncs can
// take seconds on a busy disk: never call this on a thread that others wait
// for (see engine/state_file_writer.h).
#pragma once

#include "common/status.h"

#include <string>

namespace audiod {

Status replace_file_atomically(const std::string& path, const std::string& text);

} // namespace audiod
