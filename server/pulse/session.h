// One libpulse connection's protocol: the handshake, then its commands.
// Bytes in, bytes out, and no socket (the pulse server's thread owns
// those), so that it is tested with bytes alone, real clients' included.
//
// The handshake, as libpulse 16 makes it: AUTH with the client's protocol
// version (and whether it could share memory) and a cookie, then
// SET_CLIENT_NAME with its property list. The server answers AUTH with its
// own version (and whether it takes shared memory, below). Each side then
// writes by the lower of the two versions. The cookie is not checked on
// the local socket: who may connect there is decided by the socket's
// permissions and the peer's uid, as for audiod's own socket; a TCP
// client, which has no uid to check, must present the user's cookie.
// Anything but AUTH first, a version below kOldestVersion, or a malformed
// packet ends the connection.
//
// Shared memory. Where the server allows it (a client of its own uid) and
// the client offers memfd pools at version 32 or later, the AUTH answer
// agrees to them; the client then registers its pool (REGISTER_MEMFD_SHMID,
// the memfd passed beside it) and sends audio as references into it
// (shared_memory.h). Each block is handed to the handler as audio and
// released at once: the handler copies what it keeps. A reference outside
// the registered pools ends the connection. Without agreement, audio
// travels in the frames.
//
// After it, each command goes to the handler (CommandHandler); one it does
// not take is answered ERROR(command), never with a dropped connection.
// Thread: the pulse server's.
#pragma once

#include "protocol/unique_fd.h"
#include "pulse/frame.h"
#include "pulse/protocol.h"
#include "pulse/shared_memory.h"
#include "pulse/tagstruct.h"

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace audiod::pulse {

class Session;

// A command packet (command, tag, then `fields`), framed: what either side
// sends, a reply or an event (tag kNoTag) or a request.
[[nodiscard]] std::vector<uint8_t> command_packet(Command command, uint32_t tag,
                                                  const TagWriter& fields = {});

// What a session cannot answer by itself.
class CommandHandler {
public:
    virtual ~CommandHandler() = default;
    // A command after the handshake, its fields left in `fields`. Returns
    // false if it does not know the command (the session answers
    // ERROR(command)); otherwise it answers, now or later, through the
    // session's reply functions.
    virtual bool on_command(Session& session, Command command, uint32_t tag, TagReader& fields) = 0;
    // Audio for a stream of the session's (audio.channel); the bytes are
    // valid for the call only.
    virtual bool on_audio(Session& session, const Audio& audio) = 0;
};

class Session {
public:
    // At most this many descriptors wait for the packets they came with.
    static constexpr size_t kMaxPendingFds = 4;

    // `may_share_memory`: whether this client may have its memory pools
    // used (it runs as the server's uid).
    Session(uint32_t client_index, CommandHandler& handler, bool may_share_memory = false)
        : client_index_(client_index)
        , handler_(handler)
        , may_share_memory_(may_share_memory) {}

    // AUTH must carry this cookie (a TCP client's proof that it may
    // connect), or the connection ends with ERROR(access).
    void require_cookie(std::vector<uint8_t> cookie) { required_cookie_ = std::move(cookie); }

    // Takes what the client sent, and the descriptors that came with it.
    // False if the connection must end (the reason is in error(); what is
    // queued to send should still go).
    bool receive(std::span<const uint8_t> bytes, std::vector<UniqueFd> fds = {});
    // Framed bytes to send, in order.
    [[nodiscard]] std::vector<uint8_t> take_output() { return std::move(output_); }
    [[nodiscard]] size_t output_bytes() const noexcept { return output_.size(); }

    // A REPLY to `tag` with `fields` (written after the command and tag).
    void reply(uint32_t tag, const TagWriter& fields = {});
    // An ERROR to `tag`.
    void reply_error(uint32_t tag, Error error);
    // A command from the server (an event): tag kNoTag.
    void send_command(Command command, const TagWriter& fields = {});
    // Audio to the client, for a record stream.
    void send_audio(uint32_t channel, std::span<const uint8_t> bytes);

    [[nodiscard]] uint32_t client_index() const noexcept { return client_index_; }
    // The version both write by: the lower of the client's and ours.
    [[nodiscard]] uint32_t version() const noexcept { return version_; }
    [[nodiscard]] bool authorized() const noexcept { return version_ != 0; }
    [[nodiscard]] bool named() const noexcept { return named_; }
    // Whether audio may come in shared memory (agreed at AUTH).
    [[nodiscard]] bool shares_memory() const noexcept { return shares_memory_; }
    [[nodiscard]] size_t shared_pools() const noexcept { return pools_.size(); }
    [[nodiscard]] const PropertyList& client_properties() const noexcept { return properties_; }
    [[nodiscard]] const std::string& error() const noexcept { return error_; }

private:
    bool handle(const Frame& frame);
    bool handle_auth(uint32_t tag, TagReader& fields);
    bool handle_set_client_name(uint32_t tag, TagReader& fields);
    bool handle_register_pool(TagReader& fields);
    bool handle_audio(const Frame& frame);
    bool fail(std::string reason);

    uint32_t client_index_;
    CommandHandler& handler_;
    bool may_share_memory_;
    bool shares_memory_ = false;
    SharedPools pools_;
    std::vector<UniqueFd> pending_fds_; // oldest first
    std::optional<std::vector<uint8_t>> required_cookie_;
    FrameReader reader_;
    std::vector<uint8_t> output_;
    uint32_t version_ = 0;
    bool named_ = false;
    PropertyList properties_;
    std::string error_;
};

} // namespace audiod::pulse
