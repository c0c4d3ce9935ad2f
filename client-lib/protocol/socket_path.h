// Where the control socket lives. The same rule in the server and in every
// client: $AUDIOD_SOCKET, else $XDG_RUNTIME_DIR/audiod/socket, else
// /tmp/audiod-$UID/socket. A system-wide server (audiod --system) listens
// on /run/audiod/socket; clients try the user's socket first, then that one
// (as sndio does), unless $AUDIOD_SOCKET names one.
#pragma once

#include <string>
#include <vector>

namespace audiod {

// The user's socket (and the server's, unless it runs --system).
[[nodiscard]] std::string default_socket_path();

// Where a system-wide server listens.
inline constexpr const char* kSystemSocketPath = "/run/audiod/socket";

// The sockets a client tries, in order: $AUDIOD_SOCKET alone, or the user's
// socket then the system one. The /tmp fallback is left out unless its
// directory is the user's own and private (private_to_user): in the shared
// /tmp, another user could have made it and be listening there, and a
// server of ours would have refused to start in it.
[[nodiscard]] std::vector<std::string> client_socket_paths();

// Whether the directory holding `socket_path` is a real directory of this
// user's with no access for group or others.
[[nodiscard]] bool private_to_user(const std::string& socket_path);

// True when $AUDIOD_SOCKET names the socket (the user chose its directory).
[[nodiscard]] bool socket_path_from_environment();

// Creates the socket's directory with mode 0700 if it is missing. With
// `enforce_private` (the default locations, among them the shared /tmp), an
// existing directory must also be a real directory that belongs to us with
// mode 0700 (no access for group or others), else it is refused. A
// directory the user chose explicitly is used as it is. Returns an empty string on success, else a
// message saying what is wrong.
[[nodiscard]] std::string prepare_socket_directory(const std::string& socket_path,
                                                   bool enforce_private);

// For a system-wide server: creates the socket's directory with mode 0755
// if it is missing (users must reach the socket inside); an existing one
// must belong to the server's user and be writable by no one else.
[[nodiscard]] std::string prepare_shared_socket_directory(const std::string& socket_path);

} // namespace audiod
