// Tells a service manager how the server is doing, by the readiness
// protocol of systemd's Type=notify services: datagrams such as "READY=1"
// sent to the Unix socket named by $NOTIFY_SOCKET ("/path", or "@name" for
// an abstract socket). Without $NOTIFY_SOCKET every call does nothing, so the
// server calls it unconditionally. Written here rather than taken from
// libsystemd for the same reason as socket_activation.h.
// Thread: control.
#pragma once

#include "common/status.h"

#include <string>

namespace audiod {

class ServiceNotifier {
public:
    // Reads $NOTIFY_SOCKET and removes it from the environment.
    static ServiceNotifier from_environment();

    // "READY=1" with a status line: the sinks are open and clients can connect.
    Status ready(const std::string& status) const;
    // "RELOADING=1": the configuration is being read again; ready() follows.
    Status reloading() const;
    // "STOPPING=1": a clean stop has begun.
    Status stopping() const;
    // A free-form "STATUS=" line for `systemctl status`.
    Status status(const std::string& text) const;

    [[nodiscard]] bool active() const noexcept { return !socket_.empty(); }

private:
    Status send(const std::string& message) const;

    std::string socket_; // as given in $NOTIFY_SOCKET; empty: no manager
};

} // namespace audiod
