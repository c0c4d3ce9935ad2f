#include "control/client_access.h"

#include "audiod/audiod.h"
#include "engine/app_name.h"
#include "engine/engine.h"

namespace audiod {

ClientAccess::ClientAccess(const Engine& engine, const ControlClients& clients,
                           const AccessPolicy& policy)
    : engine_(engine)
    , clients_(clients)
    , policy_(policy) {}

Caller ClientAccess::caller(const ControlClient& client) const {
    return {client.uid, client.admin};
}

MaybeError ClientAccess::require_admin(const ControlClient& client, const std::string& what) const {
    if (client.admin) {
        return std::nullopt;
    }
    std::string who = "root or the server's user";
    if (policy_.admin_group) {
        who += ", or a member of the admin group";
    }
    return ClientError{AUDIOD_E_DENIED,
                       what + " is for admins of this shared server (" + who + ")"};
}

MaybeError ClientAccess::check_stream_owner(const ControlClient& client, uint32_t stream_id) const {
    if (client.admin) {
        return std::nullopt;
    }
    const Stream* stream = engine_.find_stream(stream_id);
    if (stream == nullptr) {
        return std::nullopt; // the engine says there is no such stream
    }
    // A libaudiod client's stream is its client's; any other (a libpulse
    // client's) is known by its application's name, "UID/NAME".
    const auto owner = clients_.find(stream->client_id);
    const bool own = owner != clients_.end() ? owner->second->uid == client.uid
                                             : owns_app(policy_, caller(client), stream->app);
    if (!own) {
        return ClientError{AUDIOD_E_DENIED,
                           "stream " + std::to_string(stream_id) + " belongs to another user"};
    }
    return std::nullopt;
}

MaybeError ClientAccess::check_client_owner(const ControlClient& client,
                                            const ControlClient& other) const {
    if (client.admin || other.uid == client.uid) {
        return std::nullopt;
    }
    return ClientError{AUDIOD_E_DENIED,
                       "client " + std::to_string(other.id) + " belongs to another user"};
}

MaybeError ClientAccess::check_target(const ControlClient& client, uint32_t target,
                                      uint32_t stream_id, std::string& name) const {
    switch (static_cast<proto::VolumeTarget>(target)) {
    case proto::VolumeTarget::stream:
        return check_stream_owner(client, stream_id);
    case proto::VolumeTarget::app:
        name = requested_app(policy_, caller(client), name);
        return std::nullopt;
    case proto::VolumeTarget::sink:
        return require_admin(client, "changing a sink's volume or mute");
    case proto::VolumeTarget::source:
        return require_admin(client, "changing a source's volume or mute");
    }
    return std::nullopt; // the engine refuses unknown targets
}

void ClientAccess::show_streams(const ControlClient& client,
                                std::vector<proto::StreamInfo>& streams) const {
    audiod::show_streams(policy_, caller(client), streams);
}

void ClientAccess::show_apps(const ControlClient& client, std::vector<proto::AppInfo>& apps) const {
    audiod::show_apps(policy_, caller(client), apps);
}

bool ClientAccess::show_event(const ControlClient& client, proto::Event& event) const {
    if (event.app.empty()) {
        return true; // about sinks and sources: everyone's
    }
    const auto shown = shown_app(policy_, caller(client), event.app);
    if (!shown) {
        return false;
    }
    event.app = *shown;
    return true;
}

} // namespace audiod
