#include "protocol/request_channel.h"

#include "audiod/audiod.h"

#include <cerrno>
#include <poll.h>

namespace audiod::proto {

static_assert(AUDIOD_E_DISCONNECTED_CODE == AUDIOD_E_DISCONNECTED);

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
    case EACCES:
    case EPERM:
        return AUDIOD_E_DENIED;
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
    return connect_first({path}, nullptr);
}

int RequestChannel::connect_first(const std::vector<std::string>& paths, std::string* used) {
    int first_error = AUDIOD_E_NOSERVER;
    for (size_t i = 0; i < paths.size(); ++i) {
        const int fd = connect_seqpacket(paths[i]);
        if (fd >= 0) {
            fd_.reset(fd);
            lost_ = false;
            farewell_.reset();
            next_seq_ = 1;
            if (used != nullptr) {
                *used = paths[i];
            }
            return 0;
        }
        if (i == 0) {
            first_error = error_from_errno(fd);
        } else if (fd != -ENOENT && fd != -ECONNREFUSED) {
            first_error = error_from_errno(fd); // there, but not for us
        }
    }
    return first_error;
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
    Envelope envelope;
    for (;;) {
        if (const int ready = wait_readable(fd_.get(), deadline); ready != 0) {
            return error_from_errno(ready);
        }
        const int got = receive(packet, envelope);
        if (got < 0) {
            return got;
        }
        if (got != kReply) {
            continue; // nothing yet, or an event
        }
        if (envelope.seq != seq) {
            drop_late_reply(envelope); // to a request that timed out
            continue;
        }
        if (envelope.type == MsgType::error) {
            Error error;
            if (!decode(envelope.body, error)) {
                return AUDIOD_E_PROTOCOL;
            }
            last_error_ = error.message;
            return error.code < 0 ? error.code : AUDIOD_E_REFUSED;
        }
        if (envelope.type != reply_type) {
            return AUDIOD_E_PROTOCOL;
        }
        if (reply != nullptr) {
            *reply = std::move(packet);
        }
        return 0;
    }
}

int RequestChannel::receive(Packet& packet, Envelope& envelope) {
    const int got = recv_packet(fd_.get(), packet);
    if (got == -EAGAIN) {
        return kNothing;
    }
    if (got != 0) {
        lost_ = true;
        return error_from_errno(got);
    }
    const auto parsed = parse_envelope(packet.bytes);
    if (!parsed) {
        lost_ = true;
        return AUDIOD_E_PROTOCOL;
    }
    if (parsed->type == MsgType::error && parsed->seq == 0) {
        Error farewell;
        if (!decode(parsed->body, farewell)) {
            lost_ = true;
            return AUDIOD_E_PROTOCOL;
        }
        farewell_ = std::move(farewell);
        return kQueuedEvent;
    }
    if (parsed->type == MsgType::event) {
        if (!queue_event(parsed->body)) {
            lost_ = true;
            return AUDIOD_E_PROTOCOL;
        }
        return kQueuedEvent;
    }
    envelope = *parsed;
    return kReply;
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
    // A lost connection is read too: what the server said before it closed
    // (its farewell) may still wait there.
    if (!fd_) {
        return AUDIOD_E_DISCONNECTED;
    }
    Packet packet;
    Envelope envelope;
    for (;;) {
        // Replies read here answer requests that already timed out.
        const int got = receive(packet, envelope);
        if (got < 0) {
            return got;
        }
        if (got == kNothing) {
            return 0;
        }
        if (got == kReply) {
            drop_late_reply(envelope);
        }
    }
}

void RequestChannel::drop_late_reply(const Envelope& envelope) {
    // Else it would sit on its sink, listed and silent, for as long as this
    // connection lasts: a supervisor's re-creation given up on after its
    // 500 ms left one beside the stream made on the next try.
    StreamCreated created;
    if (envelope.type != MsgType::stream_created || !decode(envelope.body, created)) {
        return;
    }
    StreamCommand close;
    close.stream_id = created.stream_id;
    close.op = static_cast<uint32_t>(StreamOp::close);
    [[maybe_unused]] const int rc = post(close);
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
