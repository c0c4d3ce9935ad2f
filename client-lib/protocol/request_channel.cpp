#include "request_channel.h"

#include "audiod/audiod.h"

#include <cerrno>
#include <poll.h>

namespace audiod::proto {

int error_from_errno(int negative_errno) noexcept {
    switch (-negative_errno) {
    case ETIMEDOUT:
    case EAGAIN:
        return AUDIOD_E_TIMEOUT;
    case ECONNRESET:
    case EPIPE:
    case ENOTCONN:
        return AUDIOD_E_DISCONNECTED;
    case ENOENT:
    case ECONNREFUSED:
        return AUDIOD_E_NOSERVER;
    case ENOMEM:
        return AUDIOD_E_NOMEM;
    case EMSGSIZE:
        return AUDIOD_E_PROTOCOL;
    default:
        return AUDIOD_E_SYSTEM;
    }
}

int RequestChannel::protocol_error() noexcept {
    return AUDIOD_E_PROTOCOL;
}

int RequestChannel::connect(const std::string& path) {
    const int fd = connect_seqpacket(path);
    if (fd < 0) {
        return error_from_errno(fd);
    }
    fd_.reset(fd);
    lost_ = false;
    next_seq_ = 1;
    return 0;
}

int RequestChannel::call_encoded(const std::vector<uint8_t>& bytes, uint32_t seq,
                                 MsgType reply_type, Packet* reply, const Deadline& deadline) {
    last_error_.clear();
    if (lost_ || !fd_) {
        return AUDIOD_E_DISCONNECTED;
    }
    for (;;) {
        const int sent = send_packet(fd_.get(), bytes);
        if (sent == 0) {
            break;
        }
        if (sent != -EAGAIN) {
            lost_ = true;
            return error_from_errno(sent);
        }
        // The socket's buffer is full: wait for room, within the deadline.
        if (const int room = wait_for(fd_.get(), POLLOUT, deadline); room != 0) {
            return error_from_errno(room);
        }
    }
    Packet packet;
    for (;;) {
        if (const int ready = wait_readable(fd_.get(), deadline); ready != 0) {
            return error_from_errno(ready);
        }
        const int got = recv_packet(fd_.get(), packet);
        if (got == -EAGAIN) {
            continue;
        }
        if (got != 0) {
            lost_ = true;
            return error_from_errno(got);
        }
        const auto envelope = parse_envelope(packet.bytes);
        if (!envelope) {
            lost_ = true;
            return AUDIOD_E_PROTOCOL;
        }
        if (envelope->type == MsgType::event) {
            if (!queue_event(envelope->body)) {
                lost_ = true;
                return AUDIOD_E_PROTOCOL;
            }
            continue;
        }
        if (envelope->seq != seq) {
            continue; // a late reply to a request that already timed out
        }
        if (envelope->type == MsgType::error) {
            Error error;
            if (!decode(envelope->body, error)) {
                return AUDIOD_E_PROTOCOL;
            }
            last_error_ = error.message;
            return error.code < 0 ? error.code : AUDIOD_E_REFUSED;
        }
        if (envelope->type != reply_type) {
            return AUDIOD_E_PROTOCOL;
        }
        if (reply != nullptr) {
            *reply = std::move(packet);
        }
        return 0;
    }
}

bool RequestChannel::queue_event(std::span<const uint8_t> body) {
    Event event;
    if (!decode(body, event)) {
        return false;
    }
    if (events_.size() >= kMaxQueuedEvents) {
        events_.pop_front();
        ++dropped_events_;
    }
    events_.push_back(std::move(event));
    return true;
}

int RequestChannel::pump() {
    if (lost_ || !fd_) {
        return AUDIOD_E_DISCONNECTED;
    }
    Packet packet;
    for (;;) {
        const int got = recv_packet(fd_.get(), packet);
        if (got == -EAGAIN) {
            return 0;
        }
        if (got != 0) {
            lost_ = true;
            return error_from_errno(got);
        }
        const auto envelope = parse_envelope(packet.bytes);
        if (!envelope) {
            lost_ = true;
            return AUDIOD_E_PROTOCOL;
        }
        // Anything but an event is a late reply to a request that timed out.
        if (envelope->type == MsgType::event && !queue_event(envelope->body)) {
            lost_ = true;
            return AUDIOD_E_PROTOCOL;
        }
    }
}

bool RequestChannel::take_event(Event& out) {
    if (events_.empty()) {
        return false;
    }
    out = std::move(events_.front());
    events_.pop_front();
    return true;
}

} // namespace audiod::proto
