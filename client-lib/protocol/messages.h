// The control protocol between audiod and its clients (players, audioctl).
//
// Transport: a unix SOCK_SEQPACKET socket, one message per packet. A message
// is an envelope (type, sequence number) followed by the body of that type.
// Clients send requests with increasing sequence numbers; the server answers
// each with exactly one reply carrying the same number: the type-specific
// reply, `Ok`, or `Error`. File descriptors travel as SCM_RIGHTS ancillary
// data on `StreamCreated` only.
//
// Versioning: `Hello` carries kProtocolVersion; the server refuses any other
// version with an Error (AUDIOD_E_VERSION, naming both versions) before
// anything else happens, so an old client gets a clear error, never
// garbage. `Hello` and `Error` therefore never change.
//
// The layout is frozen from version 5 on: the message types, their bodies
// and the order of their fields stay as they are. What changes later is
// only appended — a new message type, or fields at the end of a body — and
// comes with a version bump. (Version 5 renamed what named a device of
// either direction: LoadDevice/UnloadDevice with a DeviceKind, the
// `device` of a stream, a move and an event.) Version 6 appended a
// source's volume, mute and default flag to SourceInfo, the default source
// to ServerInfo, and SetDefaultSource and SuspendDevice.
//
// Every decode is for hostile input: it fails on truncation, trailing bytes,
// over-long strings or lists and invalid booleans (see wire.h); semantic
// checks (known formats, sane rates) are the receiver's job.
#pragma once

#include "protocol/wire.h"

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <type_traits>
#include <vector>

namespace audiod::proto {

inline constexpr uint32_t kProtocolVersion = 6;

enum class MsgType : uint32_t {
    hello = 1,
    hello_reply = 2,
    ok = 3,
    error = 4,
    create_stream = 10,
    stream_created = 11,
    stream_command = 12,
    set_volume = 13,
    flush_stream = 14,
    list_sinks = 20,
    sink_list = 21,
    list_streams = 22,
    stream_list = 23,
    get_info = 24,
    server_info = 25,
    list_clients = 26,
    client_list = 27,
    list_apps = 28,
    app_list = 29,
    list_sources = 35,
    source_list = 36,
    load_device = 30,
    unload_device = 31,
    set_default_sink = 32,
    move_stream = 33,
    set_mute = 34,
    forget_app = 37,
    reload = 38,
    reloaded = 39,
    subscribe = 40,
    event = 41, // server -> client, unsolicited, sequence number 0
    kill_client = 42,
    set_default_source = 43,
    suspend_device = 44,
    set_group_member = 45,
    set_group_room = 46,
};

struct Hello {
    static constexpr MsgType kType = MsgType::hello;
    uint32_t version = kProtocolVersion;
    std::string app_name; // empty: the server uses the peer's executable name
};

struct HelloReply {
    static constexpr MsgType kType = MsgType::hello_reply;
    uint32_t version = kProtocolVersion;
    uint32_t client_id = 0;
    std::string server_version;
    uint32_t rate = 0;
    uint32_t channels = 0;
    uint32_t quantum = 0;
};

struct Ok {
    static constexpr MsgType kType = MsgType::ok;
};

// The reply to a request that failed. With sequence number 0 it is the
// server's last word before it closes the connection: why it did.
struct Error {
    static constexpr MsgType kType = MsgType::error;
    int32_t code = 0; // an AUDIOD_E_* value
    std::string message;
};

// Playback streams carry audio from the client to a sink; record streams
// from a source to the client, through the same kind of ring with the roles
// swapped (ring_layout.h).
enum class StreamDirection : uint32_t { playback = 0, record = 1 };

struct CreateStream {
    static constexpr MsgType kType = MsgType::create_stream;
    uint32_t format = 0; // SampleFormat
    uint32_t rate = 0;
    uint32_t channels = 0;
    uint32_t buffer_frames = 0;
    std::string device; // a sink (playback) or a source (record); empty: the default
    float volume = 1.0f;
    uint32_t direction = 0; // StreamDirection
};

// Carries two descriptors: the ring's memfd, then the wake-up eventfd.
struct StreamCreated {
    static constexpr MsgType kType = MsgType::stream_created;
    uint32_t stream_id = 0;
    uint64_t capacity_frames = 0;
    uint64_t memory_bytes = 0;
    uint32_t quantum = 0;
    std::string device; // where it plays or records: a sink, a source or SINK.monitor
};

enum class StreamOp : uint32_t { pause = 1, resume = 2, close = 3 };

struct StreamCommand {
    static constexpr MsgType kType = MsgType::stream_command;
    uint32_t stream_id = 0;
    uint32_t op = 0; // StreamOp
};

// Discards what a playback stream has queued before `position` (a position
// in the stream's current ring: where the client stopped writing when it
// asked); frames written after it stay. The stream then waits to be started
// again, as a new one does. A media player does this on every seek.
struct FlushStream {
    static constexpr MsgType kType = MsgType::flush_stream;
    uint32_t stream_id = 0;
    uint64_t position = 0;
};

// What a volume, mute or move request addresses: one stream (by id), every
// stream of an application (by name), or a sink (by name).
// `source`: a capture source (a monitor plays what its sink plays).
enum class VolumeTarget : uint32_t { stream = 1, sink = 2, app = 3, source = 4 };
enum class VolumeMode : uint32_t { absolute = 0, relative_linear = 1, relative_db = 2 };

struct SetVolume {
    static constexpr MsgType kType = MsgType::set_volume;
    uint32_t target = 0; // VolumeTarget
    uint32_t stream_id = 0;
    std::string name;  // sink name for VolumeTarget::sink
    uint32_t mode = 0; // VolumeMode
    float value = 1.0f;
};

enum class MuteMode : uint32_t { on = 1, off = 2, toggle = 3 };

struct SetMute {
    static constexpr MsgType kType = MsgType::set_mute;
    uint32_t target = 0; // VolumeTarget
    uint32_t stream_id = 0;
    std::string name;
    uint32_t mode = 0; // MuteMode
};

// Moves one stream (target stream) or every stream of an application
// (target app) to `device`: a sink for playback streams, a source or
// SINK.monitor for record streams; the application then prefers that sink.
struct MoveStream {
    static constexpr MsgType kType = MsgType::move_stream;
    uint32_t target = 0; // VolumeTarget::stream or ::app
    uint32_t stream_id = 0;
    std::string app;
    std::string device;
};

// What a device is: a sink plays, a source (a capture device, a network
// session) records.
enum class DeviceKind : uint32_t { sink = 0, source = 1 };

// One `key = value` of a device's table.
struct DeviceOption {
    std::string key;
    std::string value;
};

// Opens a device at run time (audioctl load-sink/load-source).
struct LoadDevice {
    static constexpr MsgType kType = MsgType::load_device;
    uint32_t kind = 0; // DeviceKind
    std::string type;
    std::string name;
    std::vector<DeviceOption> options;
};

struct UnloadDevice {
    static constexpr MsgType kType = MsgType::unload_device;
    uint32_t kind = 0; // DeviceKind
    std::string name;
};

struct SetDefaultSink {
    static constexpr MsgType kType = MsgType::set_default_sink;
    std::string name;
};

// What record streams that name no source record: a capture source or
// SINK.monitor.
struct SetDefaultSource {
    static constexpr MsgType kType = MsgType::set_default_source;
    std::string name;
};

// Closes a sink or capture source (by name: no sink and source share one)
// for another program to use, or opens it again; its streams play
// elsewhere meanwhile.
struct SuspendDevice {
    static constexpr MsgType kType = MsgType::suspend_device;
    std::string name;
    bool suspended = true;
};

// Makes a sink of the server a local member of a group (engine/groups.h),
// or changes its delay trim, or takes it out; until the configuration is
// reloaded.
struct SetGroupMember {
    static constexpr MsgType kType = MsgType::set_group_member;
    std::string group;
    std::string sink;
    bool member = true;
    uint32_t delay_ms = 0;
};

// Asks one of a group's rooms (a receiver elsewhere, by the name it
// reports: its member-name) for a volume, a mute or a delay trim, sent with
// the group sink's reports; or lets it go back to its own settings.
struct SetGroupRoom {
    static constexpr MsgType kType = MsgType::set_group_room;
    std::string group;
    std::string room;
    bool reset = false;
    bool set_volume = false;
    float volume = 1; // linear gain
    bool set_mute = false;
    bool muted = false;
    bool set_delay = false;
    int32_t delay_ms = -1; // -1: the room's own
};

// Asks the server to read its configuration again (as SIGHUP does).
// Answered by Reloaded, or by Error (with the file, line and reason) when
// the new configuration is refused and the running one stays.
struct Reload {
    static constexpr MsgType kType = MsgType::reload;
};

struct Reloaded {
    static constexpr MsgType kType = MsgType::reloaded;
    // What changed, one line; then one "error: ..." line per sink or source
    // that could not be opened with its new settings.
    std::string summary;
};

// Drops what the server remembers of an application (settings changed at
// run time, when it last played). Answered by Ok or Error.
struct ForgetApp {
    static constexpr MsgType kType = MsgType::forget_app;
    std::string name;
};

// Ends another connection (its streams go with it), as PulseAudio's
// kill-client does. The server tells that client why (an Error with
// sequence number 0, code AUDIOD_E_KILLED) before it closes the
// connection, so that libaudiod ends its streams with that error instead of
// reconnecting. Answered by Ok or Error.
struct KillClient {
    static constexpr MsgType kType = MsgType::kill_client;
    uint32_t client_id = 0;
};

// Asks for Event messages from now on, until the connection closes.
struct Subscribe {
    static constexpr MsgType kType = MsgType::subscribe;
};

// Event kinds, by name on the wire so that new kinds need no renumbering:
// stream-added, stream-removed, stream-moved, stream-changed, sink-added,
// sink-removed, sink-changed, source-added, source-removed,
// source-changed, default-changed, app-changed.
struct Event {
    static constexpr MsgType kType = MsgType::event;
    std::string kind;
    uint32_t stream_id = 0;
    std::string app;
    std::string device;          // the device it is about, or where the stream is
    std::string previous_device; // stream-moved: where it was; default-changed: the old default
    std::string state;
    float volume = 1.0f;
    bool muted = false;
};

struct ListClients {
    static constexpr MsgType kType = MsgType::list_clients;
};

struct ClientInfo {
    uint32_t id = 0;
    uint32_t pid = 0;
    std::string executable;
    std::string app;
    std::vector<uint32_t> streams;
};

struct ClientList {
    static constexpr MsgType kType = MsgType::client_list;
    std::vector<ClientInfo> clients;
};

struct ListApps {
    static constexpr MsgType kType = MsgType::list_apps;
};

// An application: one that plays now, or one whose settings are remembered.
struct AppInfo {
    std::string name;
    float volume = 1.0f;
    bool muted = false;
    std::string sink;     // preferred sink, "" for the default
    uint32_t streams = 0; // playing now
    // Since protocol 4:
    uint64_t last_seen = 0;  // when it last played, Unix seconds; 0 never
    bool rule = false;       // the configuration has [apps.NAME] for it
    bool remembered = false; // settings changed at run time are kept for it
};

struct AppList {
    static constexpr MsgType kType = MsgType::app_list;
    std::vector<AppInfo> apps;
};

struct ListSources {
    static constexpr MsgType kType = MsgType::list_sources;
};

// A source record streams can take audio from: for now the monitor of each
// sink, "SINK.monitor", carrying exactly what the sink plays.
struct SourceInfo {
    std::string name;
    std::string type; // "monitor"
    std::string sink; // the sink it monitors
    uint32_t rate = 0;
    uint32_t channels = 0;
    uint32_t streams = 0;
    std::string state;
    uint32_t latency_frames = 0; // a capture device's own buffer
    uint64_t xruns = 0;          // a capture device's overruns
    std::string details;         // the module's "key=value" lines, if any
    float volume = 1.0f;         // a capture device's own level (a monitor: 1)
    bool muted = false;
    bool is_default = false; // what record streams naming no source record
};

struct SourceList {
    static constexpr MsgType kType = MsgType::source_list;
    std::vector<SourceInfo> sources;
};

struct ListSinks {
    static constexpr MsgType kType = MsgType::list_sinks;
};

struct SinkInfo {
    std::string name;
    std::string type;
    uint32_t rate = 0;
    uint32_t channels = 0;
    uint32_t quantum = 0;
    uint32_t format = 0;
    float volume = 1.0f;
    bool muted = false;
    bool is_default = false;
    uint64_t frames = 0;
    uint64_t xruns = 0;
    uint32_t streams = 0;
    std::string state;
    std::string scheduling;
    uint32_t latency_frames = 0; // the device's own buffer
    std::string details;         // the module's "key=value" lines, if any
};

struct SinkList {
    static constexpr MsgType kType = MsgType::sink_list;
    std::vector<SinkInfo> sinks;
};

struct ListStreams {
    static constexpr MsgType kType = MsgType::list_streams;
};

struct StreamInfo {
    uint32_t id = 0;
    uint32_t client_id = 0;
    uint32_t pid = 0;
    std::string app;
    std::string device; // a sink; record streams: a source or SINK.monitor
    std::string state;
    float volume = 1.0f;
    bool muted = false;
    uint64_t xruns = 0; // underruns; for a record stream, overruns
    uint32_t format = 0;
    uint32_t rate = 0;
    uint32_t channels = 0;
    uint64_t buffer_frames = 0;
    uint64_t position = 0;
    uint32_t direction = 0; // StreamDirection
};

struct StreamList {
    static constexpr MsgType kType = MsgType::stream_list;
    std::vector<StreamInfo> streams;
};

struct GetInfo {
    static constexpr MsgType kType = MsgType::get_info;
};

struct ServerInfo {
    static constexpr MsgType kType = MsgType::server_info;
    std::string version;
    uint32_t protocol = kProtocolVersion;
    uint32_t pid = 0;
    uint32_t rate = 0;
    uint32_t channels = 0;
    uint32_t quantum = 0;
    uint64_t uptime_ms = 0;
    std::string scheduling;
    std::string default_sink;
    uint32_t clients = 0;
    uint32_t streams = 0;
    uint32_t sinks = 0;
    std::string state_file;
    std::string memory; // "locked", or why not
    std::string default_source;
};

// ---- field descriptions ----------------------------------------------------
// One per type, naming each field once: WireWriter and WireReader encode
// and decode with it (the wire carries values only, in this order), and
// audioctl writes its JSON with it, so the names here are the JSON keys.
// Fields that hold an enum are visited as what they hold (sample_format,
// direction); u32_or_none is an id where 0 means none.

template <class V, class M>
void visit(V&, M&) requires(std::is_empty_v<std::remove_const_t<M>>) {}

template <class V, class M>
void visit(V& v, M& m) requires std::is_same_v<std::remove_const_t<M>, Hello> {
    v.u32("version", m.version);
    v.str("app_name", m.app_name);
}

template <class V, class M>
void visit(V& v, M& m) requires std::is_same_v<std::remove_const_t<M>, HelloReply> {
    v.u32("version", m.version);
    v.u32("client_id", m.client_id);
    v.str("server_version", m.server_version);
    v.u32("rate", m.rate);
    v.u32("channels", m.channels);
    v.u32("quantum", m.quantum);
}

template <class V, class M>
void visit(V& v, M& m) requires std::is_same_v<std::remove_const_t<M>, Error> {
    v.i32("code", m.code);
    v.str("message", m.message);
}

template <class V, class M>
void visit(V& v, M& m) requires std::is_same_v<std::remove_const_t<M>, CreateStream> {
    v.u32("format", m.format);
    v.u32("rate", m.rate);
    v.u32("channels", m.channels);
    v.u32("buffer_frames", m.buffer_frames);
    v.str("device", m.device);
    v.f32("volume", m.volume);
    v.u32("direction", m.direction);
}

template <class V, class M>
void visit(V& v, M& m) requires std::is_same_v<std::remove_const_t<M>, StreamCreated> {
    v.u32("stream_id", m.stream_id);
    v.u64("capacity_frames", m.capacity_frames);
    v.u64("memory_bytes", m.memory_bytes);
    v.u32("quantum", m.quantum);
    v.str("device", m.device);
}

template <class V, class M>
void visit(V& v, M& m) requires std::is_same_v<std::remove_const_t<M>, StreamCommand> {
    v.u32("stream_id", m.stream_id);
    v.u32("op", m.op);
}

template <class V, class M>
void visit(V& v, M& m) requires std::is_same_v<std::remove_const_t<M>, FlushStream> {
    v.u32("stream_id", m.stream_id);
    v.u64("position", m.position);
}

template <class V, class M>
void visit(V& v, M& m) requires std::is_same_v<std::remove_const_t<M>, SetVolume> {
    v.u32("target", m.target);
    v.u32("stream_id", m.stream_id);
    v.str("name", m.name);
    v.u32("mode", m.mode);
    v.f32("value", m.value);
}

template <class V, class M>
void visit(V& v, M& m) requires std::is_same_v<std::remove_const_t<M>, SinkInfo> {
    v.str("name", m.name);
    v.str("type", m.type);
    v.str("state", m.state);
    v.u32("rate", m.rate);
    v.u32("channels", m.channels);
    v.u32("quantum", m.quantum);
    v.sample_format("format", m.format);
    v.f32("volume", m.volume);
    v.boolean("muted", m.muted);
    v.boolean("default", m.is_default);
    v.u32("streams", m.streams);
    v.u64("frames", m.frames);
    v.u64("xruns", m.xruns);
    v.str("scheduling", m.scheduling);
    v.u32("latency_frames", m.latency_frames);
    v.details("details", m.details);
}

template <class V, class M>
void visit(V& v, M& m) requires std::is_same_v<std::remove_const_t<M>, SinkList> {
    v.list("sinks", m.sinks, [](auto& vv, auto& item) { vv.object(item); });
}

template <class V, class M>
void visit(V& v, M& m) requires std::is_same_v<std::remove_const_t<M>, StreamInfo> {
    v.u32("id", m.id);
    v.str("app", m.app);
    v.str("device", m.device);
    v.str("state", m.state);
    v.f32("volume", m.volume);
    v.boolean("muted", m.muted);
    v.u64("xruns", m.xruns);
    v.sample_format("format", m.format);
    v.u32("rate", m.rate);
    v.u32("channels", m.channels);
    v.u32("client", m.client_id);
    v.u32("pid", m.pid);
    v.u64("buffer_frames", m.buffer_frames);
    v.u64("position", m.position);
    v.direction("direction", m.direction);
}

template <class V, class M>
void visit(V& v, M& m) requires std::is_same_v<std::remove_const_t<M>, StreamList> {
    v.list("streams", m.streams, [](auto& vv, auto& item) { vv.object(item); });
}

template <class V, class M>
void visit(V& v, M& m) requires std::is_same_v<std::remove_const_t<M>, ServerInfo> {
    v.str("version", m.version);
    v.u32("protocol", m.protocol);
    v.u32("pid", m.pid);
    v.u32("rate", m.rate);
    v.u32("channels", m.channels);
    v.u32("quantum", m.quantum);
    v.str("scheduling", m.scheduling);
    v.str("memory", m.memory);
    v.u64("uptime_ms", m.uptime_ms);
    v.str("default_sink", m.default_sink);
    v.u32("clients", m.clients);
    v.u32("streams", m.streams);
    v.u32("sink_count", m.sinks);
    v.str("state_file", m.state_file);
    v.str("default_source", m.default_source);
}

template <class V, class M>
void visit(V& v, M& m) requires std::is_same_v<std::remove_const_t<M>, SetMute> {
    v.u32("target", m.target);
    v.u32("stream_id", m.stream_id);
    v.str("name", m.name);
    v.u32("mode", m.mode);
}

template <class V, class M>
void visit(V& v, M& m) requires std::is_same_v<std::remove_const_t<M>, MoveStream> {
    v.u32("target", m.target);
    v.u32("stream_id", m.stream_id);
    v.str("app", m.app);
    v.str("device", m.device);
}

template <class V, class M>
void visit(V& v, M& m) requires std::is_same_v<std::remove_const_t<M>, DeviceOption> {
    v.str("key", m.key);
    v.str("value", m.value);
}

template <class V, class M>
void visit(V& v, M& m) requires std::is_same_v<std::remove_const_t<M>, LoadDevice> {
    v.u32("kind", m.kind);
    v.str("type", m.type);
    v.str("name", m.name);
    v.list("options", m.options, [](auto& vv, auto& item) { vv.object(item); });
}

template <class V, class M>
void visit(V& v, M& m) requires std::is_same_v<std::remove_const_t<M>, UnloadDevice> {
    v.u32("kind", m.kind);
    v.str("name", m.name);
}

template <class V, class M>
void visit(V& v, M& m) requires std::is_same_v<std::remove_const_t<M>, SetDefaultSink> {
    v.str("name", m.name);
}

template <class V, class M>
void visit(V& v, M& m) requires std::is_same_v<std::remove_const_t<M>, SetDefaultSource> {
    v.str("name", m.name);
}

template <class V, class M>
void visit(V& v, M& m) requires std::is_same_v<std::remove_const_t<M>, SuspendDevice> {
    v.str("name", m.name);
    v.boolean("suspended", m.suspended);
}

template <class V, class M>
void visit(V& v, M& m) requires std::is_same_v<std::remove_const_t<M>, SetGroupMember> {
    v.str("group", m.group);
    v.str("sink", m.sink);
    v.boolean("member", m.member);
    v.u32("delay_ms", m.delay_ms);
}

template <class V, class M>
void visit(V& v, M& m) requires std::is_same_v<std::remove_const_t<M>, SetGroupRoom> {
    v.str("group", m.group);
    v.str("room", m.room);
    v.boolean("reset", m.reset);
    v.boolean("set_volume", m.set_volume);
    v.f32("volume", m.volume);
    v.boolean("set_mute", m.set_mute);
    v.boolean("muted", m.muted);
    v.boolean("set_delay", m.set_delay);
    v.i32("delay_ms", m.delay_ms);
}

template <class V, class M>
void visit(V& v, M& m) requires std::is_same_v<std::remove_const_t<M>, ForgetApp> {
    v.str("name", m.name);
}

template <class V, class M>
void visit(V& v, M& m) requires std::is_same_v<std::remove_const_t<M>, KillClient> {
    v.u32("client", m.client_id);
}

template <class V, class M>
void visit(V& v, M& m) requires std::is_same_v<std::remove_const_t<M>, Reloaded> {
    v.details("summary", m.summary);
}

template <class V, class M>
void visit(V& v, M& m) requires std::is_same_v<std::remove_const_t<M>, Event> {
    v.str("event", m.kind);
    v.u32_or_none("stream", m.stream_id);
    v.str("app", m.app);
    v.str("device", m.device);
    v.str("previous_device", m.previous_device);
    v.str("state", m.state);
    v.f32("volume", m.volume);
    v.boolean("muted", m.muted);
}

template <class V, class M>
void visit(V& v, M& m) requires std::is_same_v<std::remove_const_t<M>, ClientInfo> {
    v.u32("id", m.id);
    v.u32("pid", m.pid);
    v.str("executable", m.executable);
    v.str("app", m.app);
    v.list("streams", m.streams, [](auto& vv, auto& item) { vv.u32(item); });
}

template <class V, class M>
void visit(V& v, M& m) requires std::is_same_v<std::remove_const_t<M>, ClientList> {
    v.list("clients", m.clients, [](auto& vv, auto& item) { vv.object(item); });
}

template <class V, class M>
void visit(V& v, M& m) requires std::is_same_v<std::remove_const_t<M>, SourceInfo> {
    v.str("name", m.name);
    v.str("type", m.type);
    v.str("sink", m.sink);
    v.str("state", m.state);
    v.u32("rate", m.rate);
    v.u32("channels", m.channels);
    v.u32("streams", m.streams);
    v.u32("latency_frames", m.latency_frames);
    v.u64("xruns", m.xruns);
    v.details("details", m.details);
    v.f32("volume", m.volume);
    v.boolean("muted", m.muted);
    v.boolean("default", m.is_default);
}

template <class V, class M>
void visit(V& v, M& m) requires std::is_same_v<std::remove_const_t<M>, SourceList> {
    v.list("sources", m.sources, [](auto& vv, auto& item) { vv.object(item); });
}

template <class V, class M>
void visit(V& v, M& m) requires std::is_same_v<std::remove_const_t<M>, AppInfo> {
    v.str("name", m.name);
    v.f32("volume", m.volume);
    v.boolean("muted", m.muted);
    v.str("sink", m.sink);
    v.u32("streams", m.streams);
    v.u64("last_seen", m.last_seen);
    v.boolean("rule", m.rule);
    v.boolean("remembered", m.remembered);
}

template <class V, class M>
void visit(V& v, M& m) requires std::is_same_v<std::remove_const_t<M>, AppList> {
    v.list("apps", m.apps, [](auto& vv, auto& item) { vv.object(item); });
}

// ---- envelopes --------------------------------------------------------------

struct Envelope {
    MsgType type{};
    uint32_t seq = 0;
    std::span<const uint8_t> body;
};

inline constexpr size_t kEnvelopeBytes = 8;

// Splits a received packet into envelope and body; nullopt if it is too short.
[[nodiscard]] std::optional<Envelope> parse_envelope(std::span<const uint8_t> packet) noexcept;

template <class M>
[[nodiscard]] std::vector<uint8_t> encode(uint32_t seq, const M& message) {
    WireWriter w;
    w.u32(static_cast<uint32_t>(M::kType));
    w.u32(seq);
    visit(w, message);
    return w.take();
}

// Decodes a body whose envelope said M::kType; false if malformed.
template <class M>
[[nodiscard]] bool decode(std::span<const uint8_t> body, M& out) {
    WireReader r(body);
    visit(r, out);
    return r.finished();
}

} // namespace audiod::proto
