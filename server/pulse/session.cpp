#include "pulse/session.h"

#include <algorithm>

namespace audiod::pulse {

bool Session::fail(std::string reason) {
    error_ = std::move(reason);
    return false;
}

bool Session::receive(std::span<const uint8_t> bytes, std::vector<UniqueFd> fds) {
    if (!error_.empty()) {
        return false;
    }
    for (UniqueFd& fd : fds) {
        pending_fds_.push_back(std::move(fd));
    }
    if (pending_fds_.size() > kMaxPendingFds) {
        return fail("file descriptors that no packet asked for");
    }
    if (!reader_.feed(bytes)) {
        return fail(reader_.error());
    }
    while (auto frame = reader_.next()) {
        if (!handle(*frame)) {
            return false;
        }
    }
    return true;
}

bool Session::handle(const Frame& frame) {
    if (!frame.is_packet()) {
        return handle_audio(frame);
    }
    TagReader fields(frame.payload);
    uint32_t command = 0;
    uint32_t tag = 0;
    if (!fields.get_u32(command) || !fields.get_u32(tag)) {
        return fail("a command packet without a command and tag");
    }
    if (!authorized()) {
        if (static_cast<Command>(command) != Command::auth) {
            return fail("a command before AUTH");
        }
        return handle_auth(tag, fields);
    }
    if (static_cast<Command>(command) == Command::auth) {
        return fail("AUTH twice");
    }
    if (static_cast<Command>(command) == Command::register_memfd_shmid) {
        return handle_register_pool(fields);
    }
    if (static_cast<Command>(command) == Command::set_client_name) {
        return handle_set_client_name(tag, fields);
    }
    if (!named_) {
        return fail("a command before SET_CLIENT_NAME");
    }
    if (!handler_.on_command(*this, static_cast<Command>(command), tag, fields)) {
        reply_error(tag, Error::command);
    }
    return true;
}

bool Session::handle_auth(uint32_t tag, TagReader& fields) {
    uint32_t word = 0;
    std::vector<uint8_t> cookie;
    if (!fields.get_u32(word) || !fields.get_arbitrary(cookie, kCookieLength) || !fields.done()) {
        return fail("a malformed AUTH");
    }
    if (required_cookie_ && cookie != *required_cookie_) {
        reply_error(tag, Error::access);
        return fail("a wrong cookie");
    }
    const uint32_t theirs = word & kVersionMask;
    if (theirs < kOldestVersion) {
        reply_error(tag, Error::version);
        return fail("protocol version " + std::to_string(theirs) + " (at least " +
                    std::to_string(kOldestVersion) + ")");
    }
    version_ = std::min(theirs, kVersion);
    // memfd pools or nothing: a POSIX shared-memory segment is named, not
    // passed, and a name is no proof of whose it is.
    shares_memory_ = may_share_memory_ && (word & kShmFlag) != 0 && (word & kMemfdFlag) != 0 &&
                     theirs >= kMemfdVersion;
    if (shares_memory_) {
        reader_.allow_shared_memory();
    }
    TagWriter answer;
    answer.put_u32(kVersion | (shares_memory_ ? kShmFlag | kMemfdFlag : 0));
    reply(tag, answer);
    return true;
}

bool Session::handle_register_pool(TagReader& fields) {
    uint32_t pool_id = 0;
    if (!fields.get_u32(pool_id) || !fields.done()) {
        return fail("a malformed REGISTER_MEMFD_SHMID");
    }
    if (pending_fds_.empty()) {
        return fail("REGISTER_MEMFD_SHMID without its memfd");
    }
    UniqueFd memfd = std::move(pending_fds_.front());
    pending_fds_.erase(pending_fds_.begin());
    if (!shares_memory_) {
        return true; // not agreed on: ignored, as PulseAudio does
    }
    if (const std::string why = pools_.add(pool_id, std::move(memfd)); !why.empty()) {
        return fail(why);
    }
    return true;
}

bool Session::handle_audio(const Frame& frame) {
    if (!named_) {
        return fail("audio before the handshake");
    }
    Audio audio{frame.channel, frame.offset, frame.flags & kSeekModeMask, frame.payload};
    std::optional<SharedBlock> block;
    if (frame.shared()) {
        block = read_shared_block(frame.payload);
        const auto bytes = block ? pools_.bytes(*block) : std::nullopt;
        if (!bytes) {
            return fail("audio in shared memory outside the pools it registered");
        }
        audio.bytes = *bytes;
    }
    const bool taken = handler_.on_audio(*this, audio);
    if (block) {
        // Copied (or dropped) by now: the client may use the block again.
        const auto release = frame_release(block->block_id);
        output_.insert(output_.end(), release.begin(), release.end());
    }
    return taken || fail("audio for no stream of its own");
}

bool Session::handle_set_client_name(uint32_t tag, TagReader& fields) {
    PropertyList properties;
    if (!fields.get_proplist(properties) || !fields.done()) {
        return fail("a malformed SET_CLIENT_NAME");
    }
    properties_ = std::move(properties);
    named_ = true;
    TagWriter answer;
    answer.put_u32(client_index_);
    reply(tag, answer);
    return true;
}

std::vector<uint8_t> command_packet(Command command, uint32_t tag, const TagWriter& fields) {
    TagWriter head;
    head.put_u32(static_cast<uint32_t>(command)).put_u32(tag);
    std::vector<uint8_t> bytes = head.take();
    bytes.insert(bytes.end(), fields.bytes().begin(), fields.bytes().end());
    return frame_packet(bytes);
}

void Session::reply(uint32_t tag, const TagWriter& fields) {
    const std::vector<uint8_t> framed = command_packet(Command::reply, tag, fields);
    output_.insert(output_.end(), framed.begin(), framed.end());
}

void Session::reply_error(uint32_t tag, Error error) {
    const std::vector<uint8_t> framed =
        command_packet(Command::error, tag, TagWriter().put_u32(static_cast<uint32_t>(error)));
    output_.insert(output_.end(), framed.begin(), framed.end());
}

void Session::send_command(Command command, const TagWriter& fields) {
    const std::vector<uint8_t> framed = command_packet(command, kNoTag, fields);
    output_.insert(output_.end(), framed.begin(), framed.end());
}

void Session::send_audio(uint32_t channel, std::span<const uint8_t> bytes) {
    const auto header = frame_header(static_cast<uint32_t>(bytes.size()), channel);
    output_.insert(output_.end(), header.begin(), header.end());
    output_.insert(output_.end(), bytes.begin(), bytes.end());
}

} // namespace audiod::pulse
