// Decodes each request a client sends and answers it: Hello, streams
// (create, pause, resume, close, flush), volumes, moves, devices, reload,
// lists and events. Every request is hostile until decoded and checked; a
// malformed one, or one before Hello, ends the client's connection. What a
// client may do is the access policy's to say (client_access.h). Thread:
// control.
#pragma once

#include "control/client_access.h"
#include "control/control_client.h"
#include "engine/engine.h"

#include <functional>
#include <span>
#include <string>
#include <variant>
#include <vector>

namespace audiod {

class RequestHandler {
public:
    // Reads the configuration again and applies it (Engine::reload).
    using Reloader = std::function<std::variant<std::string, ClientError>()>;

    // `doomed` collects clients to drop once the current event is handled
    // (one killed by another's request).
    RequestHandler(Engine& engine, ControlClients& clients, const ClientAccess& access,
                   std::vector<uint32_t>& doomed);

    void set_reloader(Reloader reloader) { reloader_ = std::move(reloader); }
    [[nodiscard]] const Reloader& reloader() const noexcept { return reloader_; }

    // Answers one packet; false if the client must be dropped.
    bool handle(ControlClient& client, const proto::Packet& packet);

private:
    using Body = std::span<const uint8_t>;

    bool handle_hello(ControlClient& client, uint32_t seq, Body body);
    bool handle_create_stream(ControlClient& client, uint32_t seq, Body body);
    bool handle_stream_command(ControlClient& client, uint32_t seq, Body body);
    bool handle_flush_stream(ControlClient& client, uint32_t seq, Body body);
    bool handle_list_clients(ControlClient& client, uint32_t seq, Body body);
    // The client's own stream of that id, or nullptr (answer with
    // reply_no_stream).
    [[nodiscard]] Stream* own_stream(const ControlClient& client, uint32_t stream_id) const;
    bool reply_no_stream(ControlClient& client, uint32_t seq, uint32_t stream_id);
    // Ends client `client_id` at `by`'s request (KillClient): tells it why,
    // then drops it once the current event is handled.
    [[nodiscard]] MaybeError kill_client(const ControlClient& by, uint32_t client_id);
    // Decodes a request of type M and answers Ok or Error with `action`'s result.
    template <class M, class Action>
    bool answer(ControlClient& client, uint32_t seq, Body body, Action&& action);

    Engine& engine_;
    ControlClients& clients_;
    const ClientAccess& access_;
    std::vector<uint32_t>& doomed_;
    Reloader reloader_;
};

} // namespace audiod
