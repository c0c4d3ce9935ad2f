// One connection to the control socket, as the control thread keeps it,
// and how it is answered. Thread: control.
#pragma once

#include "protocol/messages.h"
#include "protocol/packet_socket.h"
#include "protocol/unique_fd.h"

#include <cstdint>
#include <map>
#include <memory>
#include <span>
#include <string>
#include <sys/types.h>
#include <vector>

namespace audiod {

struct ControlClient {
    uint32_t id = 0;
    UniqueFd fd;
    pid_t pid = 0;
    uid_t uid = 0;
    bool admin = true;      // see control/access_policy.h
    std::string executable; // from /proc/PID/comm
    std::string app;        // as it declared it in Hello, made safe
    bool greeted = false;
    bool subscribed = false;
    std::vector<uint32_t> streams;
};

// Every connection, by client id.
using ControlClients = std::map<uint32_t, std::unique_ptr<ControlClient>>;

// Sends a reply (with descriptors); false if the client's socket cannot take
// it: a client that does not read its replies has filled its socket, and
// waiting for it would stall everyone, so it must be dropped.
bool send_to(ControlClient& client, const std::vector<uint8_t>& bytes,
             std::span<const int> fds = {});

template <class M>
bool reply(ControlClient& client, uint32_t seq, const M& message, std::span<const int> fds = {}) {
    return send_to(client, proto::encode(seq, message), fds);
}

bool reply_error(ControlClient& client, uint32_t seq, int code, const std::string& message);

} // namespace audiod
