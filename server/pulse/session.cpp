#include "pulse/session.h"

#include <algorithm>

namespace audiod::pulse {

bool Session::fail(std::string reason) {
    error_ = std::move(reason);
    return false;
}

bool Session::receive(std::span<const uint8_t> bytes) {
    if (!error_.empty()) {
        return false;
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
        if (!named_) {
            return fail("audio before the handshake");
        }
        return handler_.on_audio(*this, frame) || fail("audio for no stream of its own");
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
    const uint32_t theirs = word & kVersionMask;
    if (theirs < kOldestVersion) {
        reply_error(tag, Error::version);
        return fail("protocol version " + std::to_string(theirs) + " (at least " +
                    std::to_string(kOldestVersion) + ")");
    }
    version_ = std::min(theirs, kVersion);
    // Our version, and no shared memory: the flag bits stay clear.
    TagWriter answer;
    answer.put_u32(kVersion);
    reply(tag, answer);
    return true;
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

void Session::reply(uint32_t tag, const TagWriter& fields) {
    TagWriter packet;
    packet.put_u32(static_cast<uint32_t>(Command::reply)).put_u32(tag);
    std::vector<uint8_t> bytes = packet.take();
    bytes.insert(bytes.end(), fields.bytes().begin(), fields.bytes().end());
    const std::vector<uint8_t> framed = frame_packet(bytes);
    output_.insert(output_.end(), framed.begin(), framed.end());
}

void Session::reply_error(uint32_t tag, Error error) {
    TagWriter packet;
    packet.put_u32(static_cast<uint32_t>(Command::error))
        .put_u32(tag)
        .put_u32(static_cast<uint32_t>(error));
    const std::vector<uint8_t> framed = frame_packet(packet.bytes());
    output_.insert(output_.end(), framed.begin(), framed.end());
}

void Session::send_command(Command command, const TagWriter& fields) {
    TagWriter packet;
    packet.put_u32(static_cast<uint32_t>(command)).put_u32(kNoTag);
    std::vector<uint8_t> bytes = packet.take();
    bytes.insert(bytes.end(), fields.bytes().begin(), fields.bytes().end());
    const std::vector<uint8_t> framed = frame_packet(bytes);
    output_.insert(output_.end(), framed.begin(), framed.end());
}

void Session::send_audio(uint32_t channel, std::span<const uint8_t> bytes) {
    const auto header = frame_header(static_cast<uint32_t>(bytes.size()), channel);
    output_.insert(output_.end(), header.begin(), header.end());
    output_.insert(output_.end(), bytes.begin(), bytes.end());
}

} // namespace audiod::pulse
