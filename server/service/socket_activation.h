// Socket activation: the listening socket handed over by systemd (or
// systemd-socket-activate, or any launcher that speaks the same protocol)
// through $LISTEN_PID, $LISTEN_FDS and descriptor 3. Written here rather than
// taken from libsystemd: the protocol is three environment variables and a
// descriptor number, and audiod must run where systemd is absent.
// Thread: control (start-up, before any other thread exists).
#pragma once

#include "protocol/unique_fd.h"

#include <optional>
#include <string>
#include <variant>

namespace audiod {

struct ActivatedSocket {
    UniqueFd fd;      // listening, made non-blocking and close-on-exec
    std::string path; // where it is bound, for the log and the lock
    // The PulseAudio-protocol socket (audiod-pulse.socket), when it was
    // passed too: a listening AF_UNIX SOCK_STREAM socket.
    std::optional<UniqueFd> pulse_fd;
    std::string pulse_path;
};

// Takes the sockets passed for this process, if any: nullopt when nothing
// was passed (no $LISTEN_FDS, or $LISTEN_PID names another process), an
// error when something was passed that audiod cannot serve (not one or two
// descriptors; not one listening AF_UNIX SOCK_SEQPACKET socket, audiod's,
// and at most one SOCK_STREAM one, the pulse socket). Clears the variables
// so that children do not inherit them.
[[nodiscard]] std::variant<std::nullopt_t, ActivatedSocket, std::string> take_activated_socket();

} // namespace audiod
