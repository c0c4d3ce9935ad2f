// The client end of the control socket: sends a request and waits, within a
// deadline, for the reply carrying the same sequence number. Shared by
// libaudiod and audioctl. Not thread-safe: callers serialise (libaudiod holds
// a mutex per context).
#pragma once

#include "protocol/deadline.h"
#include "protocol/messages.h"
#include "protocol/packet_socket.h"
#include "protocol/unique_fd.h"

#include <deque>
#include <optional>
#include <string>
#include <vector>

namespace audiod::proto {

// AUDIOD_E_DISCONNECTED, without making this header depend on audiod.h.
inline constexpr int AUDIOD_E_DISCONNECTED_CODE = -5;

// Maps an errno-style transport failure to an AUDIOD_E_* code.
[[nodiscard]] int error_from_errno(int negative_errno) noexcept;

class RequestChannel {
public:
    RequestChannel() = default;
    explicit RequestChannel(UniqueFd fd)
        : fd_(std::move(fd)) {}

    // Connects to the socket at `path`. Returns 0 or an AUDIOD_E_* code.
    [[nodiscard]] int connect(const std::string& path);
    // Connects to the first of `paths` that accepts, and says which in
    // `*used`. When none does, the error is the first path's, unless a later
    // one exists but refused (permission denied, say), which says more.
    [[nodiscard]] int connect_first(const std::vector<std::string>& paths, std::string* used);

    [[nodiscard]] int fd() const noexcept { return fd_.get(); }
    // True once the connection has failed; every later call fails at once.
    [[nodiscard]] bool lost() const noexcept { return lost_; }
    // The server's message for the last Error reply ("" if the last call succeeded).
    [[nodiscard]] const std::string& last_error() const noexcept { return last_error_; }
    // Why the server closed the connection, if it said (an Error with
    // sequence number 0: AUDIOD_E_KILLED, a malformed request ...).
    [[nodiscard]] const std::optional<Error>& farewell() const noexcept { return farewell_; }

    // Sends `request`; waits until `deadline` for the reply. Returns 0 with
    // the reply's packet in *reply (may be null), or an AUDIOD_E_* code: the
    // code of an Error reply, AUDIOD_E_TIMEOUT, AUDIOD_E_DISCONNECTED, ...
    template <class Request>
    [[nodiscard]] int call(const Request& request, MsgType reply_type, Packet* reply,
                           const Deadline& deadline) {
        const uint32_t seq = next_seq_++;
        return call_encoded(encode(seq, request), seq, reply_type, reply, deadline);
    }

    // Sends `request` without waiting for its reply (which, when it comes,
    // is skipped like any late reply). Returns 0 or an AUDIOD_E_* code.
    template <class Request>
    int post(const Request& request) {
        if (lost_ || !fd_) {
            return AUDIOD_E_DISCONNECTED_CODE;
        }
        const int rc = send_packet(fd_.get(), encode(next_seq_++, request));
        return rc == 0 ? 0 : error_from_errno(rc);
    }

    // Reads what is waiting on the socket without blocking, queueing events.
    // Returns 0, or an AUDIOD_E_* code when the connection failed.
    [[nodiscard]] int pump();
    // Takes the oldest queued event; false if none.
    bool take_event(Event& out);
    [[nodiscard]] size_t queued_events() const noexcept { return events_.size(); }
    // Events discarded because nobody took them (the queue holds kMaxQueuedEvents).
    [[nodiscard]] uint64_t dropped_events() const noexcept { return dropped_events_; }
    static constexpr size_t kMaxQueuedEvents = 4096;

    // call() and decode the reply body into *out.
    template <class Request, class Reply>
    [[nodiscard]] int call_for(const Request& request, Reply* out, const Deadline& deadline) {
        Packet packet;
        const int rc = call(request, Reply::kType, &packet, deadline);
        if (rc != 0) {
            return rc;
        }
        const auto envelope = parse_envelope(packet.bytes);
        return envelope && decode(envelope->body, *out) ? 0 : protocol_error();
    }

private:
    int call_encoded(const std::vector<uint8_t>& bytes, uint32_t seq, MsgType reply_type,
                     Packet* reply, const Deadline& deadline);
    static int protocol_error() noexcept;
    // Queues an Event packet; false if it is malformed.
    bool queue_event(std::span<const uint8_t> body);
    // A reply that came after its request was given up on: a stream the
    // server made for it belongs to no one, and is closed.
    void drop_late_reply(const Envelope& envelope);
    // Reads one packet without blocking: kNothing if none is waiting,
    // kQueuedEvent if it was an event (now queued) or the server's farewell
    // (now in farewell_), kReply with `envelope`
    // pointing into `packet`, or an AUDIOD_E_* code (the connection is lost).
    enum : int { kNothing = 1, kQueuedEvent = 2, kReply = 3 };
    int receive(Packet& packet, Envelope& envelope);

    UniqueFd fd_;
    std::deque<Event> events_;
    uint64_t dropped_events_ = 0;
    uint32_t next_seq_ = 1;
    bool lost_ = false;
    std::string last_error_;
    std::optional<Error> farewell_;
};

} // namespace audiod::proto
