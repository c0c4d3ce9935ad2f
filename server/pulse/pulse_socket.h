// Where the pulse server listens, and taking that socket without taking
// it from anyone: libpulse looks for $XDG_RUNTIME_DIR/pulse/native, where
// PulseAudio or pipewire-pulse may already serve. Thread: control.
#pragma once

#include "control/instance_lock.h"
#include "protocol/unique_fd.h"

#include <cstdint>
#include <optional>
#include <string>
#include <variant>
#include <vector>

namespace audiod::pulse {

class PulseServer;

// $XDG_RUNTIME_DIR/pulse/native, or "" without $XDG_RUNTIME_DIR.
[[nodiscard]] std::string default_pulse_socket();
// Where libpulse looks when its user has no server: a system-wide one's.
inline constexpr const char* kSystemPulseSocket = "/run/pulse/native";

// Takes the socket at `path`: its folder is made where it is missing
// (0700; 0755 for a `group`); a socket that a live server answers on is
// left alone (an error saying so), and one nobody answers on is a stale
// one, replaced. Returns the listening socket (SOCK_STREAM), or why not.
// The socket is the user's (0600), or `group`'s (0660): a system-wide
// server's users.
[[nodiscard]] std::variant<UniqueFd, std::string>
listen_for_pulse(const std::string& path, const std::optional<SocketGroup>& group = {});

// Takes `path` and starts `server` on it, logging what happened and why
// not: audiod serves its own socket whatever becomes of this one. False if
// it does not serve.
bool start_pulse_server(PulseServer& server, const std::string& path,
                        const std::optional<SocketGroup>& group = {});

// A TCP listener at `where`: "PORT" on 127.0.0.1 (this machine's users
// only), or "HOST:PORT" as configured ("[ADDRESS]:PORT" for IPv6).
[[nodiscard]] std::variant<UniqueFd, std::string> listen_tcp_for_pulse(const std::string& where);

// libpulse's cookie file: $XDG_CONFIG_HOME/pulse/cookie, else
// ~/.config/pulse/cookie; "" if neither can be named.
[[nodiscard]] std::string default_pulse_cookie();
// The 256 bytes of the cookie at `path`, made (random, mode 0600, its
// folder 0700) if it is missing; or why not.
[[nodiscard]] std::variant<std::vector<uint8_t>, std::string> pulse_cookie(const std::string& path);

// Has `server`, once started, serve TCP clients at `where` too, each
// proving with the cookie at `cookie_path` that it may (a TCP peer has no
// uid to check): logs what happened. False if it does not.
bool serve_pulse_tcp(PulseServer& server, const std::string& where, const std::string& cookie_path);

// Starts `server` on a socket the service manager passed (bound to `path`,
// listening), logging what happened. False if it does not serve.
bool serve_passed_pulse_socket(PulseServer& server, UniqueFd listener, const std::string& path);

} // namespace audiod::pulse
