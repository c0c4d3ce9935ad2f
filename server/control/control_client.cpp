#include "control/control_client.h"

#include "log.h"

#include <cstring>

namespace audiod {

bool send_to(ControlClient& client, const std::vector<uint8_t>& bytes, std::span<const int> fds) {
    const int rc = proto::send_packet(client.fd.get(), bytes, fds);
    if (rc != 0) {
        // A client that does not read its replies has filled its socket;
        // waiting for it would stall everyone, so it goes.
        log_warning("control", "client " + std::to_string(client.id) +
                                   " cannot take a reply: " + std::strerror(-rc));
        return false;
    }
    return true;
}

bool reply_error(ControlClient& client, uint32_t seq, int code, const std::string& message) {
    proto::Error error;
    error.code = code;
    error.message = message;
    return reply(client, seq, error);
}

} // namespace audiod
