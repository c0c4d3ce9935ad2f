// Fuzz target: what a PulseAudio client sends, which anyone who can open
// the socket may send. The bytes arrive in two pieces (cut where the first
// byte says), as a whole connection (handshake and commands: what the
// server sends back must be well framed) and as frames (shared-memory
// references allowed where the first byte is odd), each command
// packet read value by value as its type bytes say, each value written
// again and required to read back the same.
#include "pulse/frame.h"
#include "pulse/pulse_modules.h"
#include "pulse/sample_spec.h"
#include "pulse/session.h"
#include "pulse/shared_memory.h"
#include "pulse/stream_request.h"
#include "pulse/stream_restore.h"
#include "pulse/tagstruct.h"

#include <cstdint>
#include <span>

using namespace audiod::pulse;

namespace {

// Reads the next value and writes it to `out`; false at the end or on
// what cannot be read.
bool copy_value(TagReader& in, TagWriter& out) {
    switch (in.peek_type()) {
    case 't':
    case 'N': {
        std::optional<std::string> v;
        return in.get_string(v) && (out.put_optional_string(v), true);
    }
    case 'L': {
        uint32_t v = 0;
        return in.get_u32(v) && (out.put_u32(v), true);
    }
    case 'B': {
        uint8_t v = 0;
        return in.get_u8(v) && (out.put_u8(v), true);
    }
    case 'R': {
        uint64_t v = 0;
        return in.get_u64(v) && (out.put_u64(v), true);
    }
    case 'r': {
        int64_t v = 0;
        return in.get_s64(v) && (out.put_s64(v), true);
    }
    case 'U': {
        uint64_t v = 0;
        return in.get_usec(v) && (out.put_usec(v), true);
    }
    case '0':
    case '1': {
        bool v = false;
        return in.get_bool(v) && (out.put_bool(v), true);
    }
    case 'a': {
        SampleSpec v;
        return in.get_sample_spec(v) && (out.put_sample_spec(v), true);
    }
    case 'x': {
        std::vector<uint8_t> v;
        return in.get_arbitrary(v, kMaxPropertyBytes) && (out.put_arbitrary(v), true);
    }
    case 'T': {
        Timeval v;
        return in.get_timeval(v) && (out.put_timeval(v), true);
    }
    case 'm': {
        ChannelMap v;
        return in.get_channel_map(v) && (out.put_channel_map(v), true);
    }
    case 'v': {
        ChannelVolumes v;
        return in.get_channel_volumes(v) && (out.put_channel_volumes(v), true);
    }
    case 'V': {
        uint32_t v = 0;
        return in.get_volume(v) && (out.put_volume(v), true);
    }
    case 'P': {
        PropertyList v;
        return in.get_proplist(v) && (out.put_proplist(v), true);
    }
    case 'f': {
        FormatInfo v;
        return in.get_format_info(v) && (out.put_format_info(v), true);
    }
    default:
        return false;
    }
}

void read_packet(std::span<const uint8_t> packet) {
    TagReader in(packet);
    TagWriter out;
    size_t values = 0;
    while (copy_value(in, out)) {
        ++values;
    }
    if (!in.ok() && in.peek_type() != -1) {
        __builtin_trap(); // a failed reader reads nothing more
    }
    // What was read reads back the same.
    TagReader again(out.bytes());
    TagWriter twice;
    for (size_t i = 0; i < values; ++i) {
        if (!copy_value(again, twice)) {
            __builtin_trap();
        }
    }
    if (!again.done() || twice.bytes() != out.bytes()) {
        __builtin_trap();
    }
}

// Reads CREATE_PLAYBACK_STREAM's and CREATE_RECORD_STREAM's fields as the
// server does (a request read whole must hold a sample spec and a channel
// map it can describe), LOAD_MODULE's arguments as module-null-sink's, and
// EXTENSION's fields as stream-restore entries; knows no stream: the
// session answers the handshake and ERROR(command) to the rest.
struct NoCommands : CommandHandler {
    bool on_command(Session& session, Command command, uint32_t, TagReader& fields) override {
        if (command == Command::create_playback_stream) {
            if (const auto request = read_playback_request(fields, session.version())) {
                if (request->map.positions.size() > kMaxChannels ||
                    linear_gain(request->volume) > 4.0f) {
                    __builtin_trap();
                }
                (void)spec_of(request->formats.empty() ? FormatInfo{} : request->formats[0]);
            }
        } else if (command == Command::create_record_stream) {
            if (const auto request = read_record_request(fields, session.version())) {
                if (request->map.positions.size() > kMaxChannels) {
                    __builtin_trap();
                }
            }
        } else if (command == Command::load_module) {
            std::string name;
            std::string argument;
            if (fields.get_string(name) && fields.get_string(argument)) {
                (void)plan_null_sink(argument);
            }
        } else if (command == Command::extension) {
            uint32_t index = 0;
            std::optional<std::string> name;
            uint32_t subcommand = 0;
            if (fields.get_u32(index) && fields.get_string(name) && fields.get_u32(subcommand)) {
                RestoreEntry entry;
                while (get_restore_entry(fields, entry)) {
                    if (entry.name.empty() ||
                        (!entry.volume.values.empty() &&
                         entry.volume.values.size() != entry.map.positions.size())) {
                        __builtin_trap();
                    }
                }
            }
        }
        return false;
    }
    bool on_audio(Session&, const Audio&) override { return false; }
};

// The same bytes as a connection: whatever they hold, what the session
// sends back is well framed.
void run_session(std::span<const uint8_t> first, std::span<const uint8_t> second) {
    NoCommands handler;
    Session session(1, handler);
    if (session.receive(first)) {
        session.receive(second);
    }
    FrameReader answers;
    if (!answers.feed(session.take_output())) {
        __builtin_trap();
    }
    while (auto frame = answers.next()) {
        TagReader r(frame->payload);
        uint32_t command = 0;
        uint32_t tag = 0;
        if (!frame->is_packet() || !r.get_u32(command) || !r.get_u32(tag)) {
            __builtin_trap();
        }
    }
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    if (size == 0) {
        return 0;
    }
    const size_t cut = std::min<size_t>(data[0], size - 1);
    std::span<const uint8_t> bytes(data + 1, size - 1);
    run_session(bytes.first(cut), bytes.subspan(cut));
    FrameReader reader(1 << 16);
    if ((data[0] & 1) != 0) {
        reader.allow_shared_memory(); // audio frames by reference may come
    }
    if (reader.feed(bytes.first(cut)) && reader.feed(bytes.subspan(cut))) {
        while (auto frame = reader.next()) {
            if (frame->payload.empty() || frame->payload.size() > (1 << 16) ||
                (frame->shared() && !read_shared_block(frame->payload))) {
                __builtin_trap();
            }
            if (frame->is_packet()) {
                read_packet(frame->payload);
            }
        }
    }
    return 0;
}
