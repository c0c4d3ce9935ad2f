// What each client may see and do, by the access policy
// (control/access_policy.h): on a system-wide server a user sees and
// controls only their own clients, streams and applications, and changes
// what is shared only as an admin. On a per-user server every check passes
// and every list is whole. Thread: control.
#pragma once

#include "control/access_policy.h"
#include "control/control_client.h"
#include "engine/client_error.h"
#include "protocol/messages.h"

#include <string>
#include <vector>

namespace audiod {

class Engine;

class ClientAccess {
public:
    // All three are the control server's, and outlive this.
    ClientAccess(const Engine& engine, const ControlClients& clients, const AccessPolicy& policy);

    [[nodiscard]] Caller caller(const ControlClient& client) const;
    [[nodiscard]] const AccessPolicy& policy() const noexcept { return policy_; }
    [[nodiscard]] MaybeError require_admin(const ControlClient& client,
                                           const std::string& what) const;
    [[nodiscard]] MaybeError check_stream_owner(const ControlClient& client,
                                                uint32_t stream_id) const;
    [[nodiscard]] MaybeError check_client_owner(const ControlClient& client,
                                                const ControlClient& other) const;
    // A volume, mute or move target; an app:NAME is rewritten to the
    // engine's name for it.
    [[nodiscard]] MaybeError check_target(const ControlClient& client, uint32_t target,
                                          uint32_t stream_id, std::string& name) const;
    void show_streams(const ControlClient& client, std::vector<proto::StreamInfo>& streams) const;
    void show_apps(const ControlClient& client, std::vector<proto::AppInfo>& apps) const;
    // False if the event is not for this client's eyes; else as it sees it.
    [[nodiscard]] bool show_event(const ControlClient& client, proto::Event& event) const;

private:
    const Engine& engine_;
    const ControlClients& clients_;
    const AccessPolicy& policy_;
};

} // namespace audiod
