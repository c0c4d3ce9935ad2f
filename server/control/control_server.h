// The control thread: one epoll loop that accepts clients, answers their
// requests, relays RT events to the engine, sends engine events to the
// clients that subscribed, and stops on SIGINT/SIGTERM. It never touches
// audio; a slow or hostile client can only waste its own requests.
// Thread: control (the main thread), for every member.
#pragma once

#include "common/status.h"
#include "control/access_policy.h"
#include "control/client_access.h"
#include "control/control_client.h"
#include "control/request_handler.h"
#include "engine/engine.h"
#include "protocol/packet_socket.h"
#include "protocol/unique_fd.h"
#include "pulse/engine_gateway.h"

#include <functional>
#include <map>
#include <memory>
#include <span>
#include <string>
#include <sys/types.h>
#include <variant>
#include <vector>

namespace audiod {

class ControlServer : public EngineObserver {
public:
    // Becomes the engine's observer, so create it before Engine::start().
    explicit ControlServer(Engine& engine);
    ControlServer(const ControlServer&) = delete;
    ControlServer& operator=(const ControlServer&) = delete;
    ~ControlServer() override;

    // Reads the configuration again and applies it (Engine::reload), for
    // SIGHUP and the Reload request.
    using Reloader = RequestHandler::Reloader;
    void set_reloader(Reloader reloader) { requests_.set_reloader(std::move(reloader)); }
    // How callers are checked (a system-wide server); call before run().
    void set_access_policy(const AccessPolicy& policy) { policy_ = policy; }
    // Runs the jobs another thread (the pulse server) posts for the engine;
    // call before run().
    void serve_gateway(pulse::EngineGateway& gateway) { gateway_ = &gateway; }

    // Serves `listener` (bound and listening) until SIGINT or SIGTERM, and
    // reloads on SIGHUP; the caller must have blocked the three in every
    // thread. Fails only on an error that stops the server.
    Status run(UniqueFd listener);

    // EngineObserver
    void on_event(const proto::Event& event) override;
    void on_device_opened(Device& sink) override;
    void on_device_closing(Device& sink) override;
    void on_client_fault(uint32_t client_id, const std::string& reason) override;

private:
    void accept_clients();
    void on_client_readable(uint32_t client_id);
    void drop_client(uint32_t client_id, const std::string& reason);
    bool watch(int fd, uint64_t tag);

    Engine& engine_;
    UniqueFd listener_;
    UniqueFd epoll_;
    UniqueFd signals_;
    ControlClients clients_;
    std::vector<uint32_t> doomed_; // clients to drop once the current event is handled
    uint32_t next_client_id_ = 1;
    AccessPolicy policy_;
    pulse::EngineGateway* gateway_ = nullptr;
    ClientAccess access_;
    RequestHandler requests_;
};

} // namespace audiod
