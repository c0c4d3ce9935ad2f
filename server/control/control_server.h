// The control thread: one epoll loop that accepts clients, answers their
// requests, relays RT events to the engine, sends engine events to the
// clients that subscribed, and stops on SIGINT/SIGTERM. It never touches
// audio; a slow or hostile client can only waste its own requests.
// Thread: control (the main thread), for every member.
#pragma once

#include "common/status.h"
#include "control/access_policy.h"
#include "engine/engine.h"
#include "protocol/packet_socket.h"
#include "protocol/unique_fd.h"

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
    using Reloader = std::function<std::variant<std::string, ClientError>()>;
    void set_reloader(Reloader reloader) { reloader_ = std::move(reloader); }
    // How callers are checked (a system-wide server); call before run().
    void set_access_policy(const AccessPolicy& policy) { policy_ = policy; }

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
    struct Client {
        uint32_t id = 0;
        UniqueFd fd;
        pid_t pid = 0;
        uid_t uid = 0;
        bool admin = true;      // see control/access_policy.h
        std::string executable; // from /proc/PID/comm
        std::string app;
        bool greeted = false;
        bool subscribed = false;
        std::vector<uint32_t> streams;
    };
    using Body = std::span<const uint8_t>;

    void accept_clients();
    void on_client_readable(uint32_t client_id);
    void drop_client(uint32_t client_id, const std::string& reason);
    bool watch(int fd, uint64_t tag);

    // control_requests.cpp. Each returns false if the client must be dropped.
    bool handle_packet(Client& client, const proto::Packet& packet);
    bool handle_hello(Client& client, uint32_t seq, Body body);
    bool handle_create_stream(Client& client, uint32_t seq, Body body);
    bool handle_stream_command(Client& client, uint32_t seq, Body body);
    bool handle_flush_stream(Client& client, uint32_t seq, Body body);
    // The client's own stream of that id, or nullptr (answer with
    // reply_no_stream).
    [[nodiscard]] Stream* own_stream(const Client& client, uint32_t stream_id) const;
    bool reply_no_stream(Client& client, uint32_t seq, uint32_t stream_id);
    bool handle_list_clients(Client& client, uint32_t seq, Body body);
    // Ends client `client_id` at `by`'s request (KillClient): tells it why,
    // then drops it once the current event is handled.
    [[nodiscard]] MaybeError kill_client(const Client& by, uint32_t client_id);
    // Decodes a request of type M and answers Ok or Error with `action`'s result.
    template <class M, class Action>
    bool answer(Client& client, uint32_t seq, Body body, Action&& action);

    // control_access.cpp: the access policy applied to requests and lists.
    [[nodiscard]] Caller caller(const Client& client) const;
    [[nodiscard]] MaybeError require_admin(const Client& client, const std::string& what) const;
    [[nodiscard]] MaybeError check_stream_owner(const Client& client, uint32_t stream_id) const;
    [[nodiscard]] MaybeError check_client_owner(const Client& client, const Client& other) const;
    // A volume, mute or move target; an app:NAME is rewritten to the
    // engine's name for it.
    [[nodiscard]] MaybeError check_target(const Client& client, uint32_t target, uint32_t stream_id,
                                          std::string& name) const;
    void show_streams(const Client& client, std::vector<proto::StreamInfo>& streams) const;
    void show_apps(const Client& client, std::vector<proto::AppInfo>& apps) const;
    // False if the event is not for this client's eyes; else as it sees it.
    [[nodiscard]] bool show_event(const Client& client, proto::Event& event) const;

    // Replies; false if the client's socket cannot take it (drop the client).
    template <class M>
    bool reply(Client& client, uint32_t seq, const M& message, std::span<const int> fds = {}) {
        return send_reply(client, proto::encode(seq, message), fds);
    }
    bool send_reply(Client& client, const std::vector<uint8_t>& bytes, std::span<const int> fds);
    bool reply_error(Client& client, uint32_t seq, int code, const std::string& message);

    Engine& engine_;
    UniqueFd listener_;
    UniqueFd epoll_;
    UniqueFd signals_;
    std::map<uint32_t, std::unique_ptr<Client>> clients_;
    std::vector<uint32_t> doomed_; // clients to drop once the current event is handled
    uint32_t next_client_id_ = 1;
    Reloader reloader_;
    AccessPolicy policy_;
};

// Makes a client-supplied name safe to show and store: valid UTF-8 without
// control characters, at most 64 bytes. Exposed for its unit test.
[[nodiscard]] std::string sanitize_name(const std::string& raw);

} // namespace audiod
