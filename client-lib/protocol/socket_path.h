// Where the control socket lives. The same rule in the server and in every
// client: $AUDIOD_SOCKET, else $XDG_RUNTIME_DIR/audiod/socket, else
// /tmp/audiod-$UID/socket.
#pragma once

#include <string>

namespace audiod {

[[nodiscard]] std::string default_socket_path();

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

} // namespace audiod
