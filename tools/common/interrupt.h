// Ctrl-C and SIGTERM as a flag that a tool's loop reads, so that it ends
// its stream cleanly (audioplay, audiorec) instead of dying mid-write.
#pragma once

namespace audiod::cli {

// Installs the handler for SIGINT and SIGTERM (without SA_RESTART, so that
// a blocking read returns EINTR and the loop sees the flag).
void stop_on_interrupt();

// Whether one of them has come. Thread: any.
bool interrupted() noexcept;

} // namespace audiod::cli
