// The control thread: one epoll loop that accepts clients, answers their
// requests, relays RT events to the engine and stops on SIGINT/SIGTERM.
// It never touches audio; a slow or hostile client can only waste its own
// requests. Thread: control (the main thread), for every member.
#pragma once

#include "engine.h"
#include "packet_socket.h"
#include "unique_fd.h"

#include <map>
#include <memory>
#include <string>
#include <sys/types.h>
#include <vector>

namespace audiod {

class ControlServer {
public:
    // `listener` is a bound, listening SOCK_SEQPACKET socket.
    ControlServer(Engine& engine, UniqueFd listener);
    ControlServer(const ControlServer&) = delete;
    ControlServer& operator=(const ControlServer&) = delete;
    ~ControlServer();

    // Runs until SIGINT or SIGTERM (which the caller must have blocked in
    // every thread). Returns "" or a fatal error.
    std::string run();

private:
    struct Client {
        uint32_t id = 0;
        UniqueFd fd;
        pid_t pid = 0;
        uid_t uid = 0;
        std::string executable; // from /proc/PID/comm
        std::string app;
        bool greeted = false;
        std::vector<uint32_t> streams;
    };

    void accept_clients();
    void on_client_readable(uint32_t client_id);
    void drop_client(uint32_t client_id, const std::string& reason);
    // Returns false if the client must be dropped.
    bool handle_packet(Client& client, const proto::Packet& packet);

    bool handle_hello(Client& client, uint32_t seq, std::span<const uint8_t> body);
    bool handle_create_stream(Client& client, uint32_t seq, std::span<const uint8_t> body);
    bool handle_stream_command(Client& client, uint32_t seq, std::span<const uint8_t> body);
    bool handle_set_volume(Client& client, uint32_t seq, std::span<const uint8_t> body);

    // Replies; false if the client's socket cannot take it (drop the client).
    template <class M>
    bool reply(Client& client, uint32_t seq, const M& message, std::span<const int> fds = {});
    bool reply_error(Client& client, uint32_t seq, int code, const std::string& message);

    Engine& engine_;
    UniqueFd listener_;
    UniqueFd epoll_;
    UniqueFd signals_;
    std::map<uint32_t, std::unique_ptr<Client>> clients_;
    std::vector<uint32_t> doomed_; // clients to drop once the current event is handled
    uint32_t next_client_id_ = 1;
};

} // namespace audiod
