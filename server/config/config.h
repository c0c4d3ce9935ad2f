// The server's configuration file (TOML):
//
//   [server]
//   rate = 48000          # Hz, 8000..192000
//   channels = 2          # 1..8
//   quantum = 256         # frames per cycle, 16..8192
//   default-sink = "speakers"
//   default-source = "mic" # or "speakers.monitor" (the default)
//   rt-priority = 20      # SCHED_FIFO priority when permitted; 0 disables
//   stall-timeout-ms = 1000 # a stream starved this long is marked stalled
//   resample-quality = 5  # 0 (cheapest) .. 10 (best), for streams at other rates
//   client-memory-mb = 64 # stream buffers one client may hold, 1..4096
//
//   [sinks.speakers]      # one table per sink; the name is the table's key
//   type = "auto"         # a module name: null, file, alsa ..., or "auto"
//   rate = 44100          # this sink's own rate, channels, quantum (default:
//   channels = 2          #   the [server] values)
//   path = "/tmp/x.wav"   # any further keys are options for the module
//
//   [sources.mic]         # a capture device record streams can take from
//   type = "alsa"         # a module with a source: alsa
//   device = "hw:0,0"
//
//   [groups.house]        # an rtp sink the rooms of a house receive, played
//   destination = "239.10.10.1" # in step on this machine's sinks too
//   link-offset-ms = 150  # when a frame is heard, after it was due: as the rooms'
//   local = ["speakers", { sink = "tv", delay-ms = 40, volume = "80%" }]
//
//   [apps.mpv]            # settings an application starts with, by the name
//   volume = "50%"        #   it declares (else its executable's): volume as
//   mute = false          #   audioctl takes it (absolute), mute, and the sink
//   sink = "speakers"     #   it plays to
//
// Every error names the file, the line and the reason; unknown keys in
// [server] and unknown top-level tables are errors, not silently ignored.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

namespace audiod {

// How many sinks and sources (groups' sinks included) one server keeps,
// configured and loaded at run time together: a guard against a client
// that loads without end (each costs a thread), far above any setup's
// needs. (It was 32, and applied only to loads: a server configured with
// 37 sinks could not load back one it had unloaded; the soak found it.)
inline constexpr size_t kMaxDevices = 256;

// A [sinks.NAME] or [sources.NAME] table: a device, by name.
struct DeviceConfig {
    std::string name;
    std::string type;
    std::vector<std::pair<std::string, std::string>> options; // in file order
    unsigned line = 0;
};

// [apps.NAME]: what an application starts with until it is changed at run
// time. Unset fields keep the defaults (100 %, not muted, default sink).
struct AppRule {
    std::string app;
    std::optional<float> volume; // linear
    std::optional<bool> muted;
    std::string sink; // "" for the default sink
    unsigned line = 0;
};

// One of a group's local members: a sink of this machine that plays what
// the group sends, in step with the rooms that receive it.
struct GroupMember {
    std::string sink;
    // How late this member's sound comes out after the sink plays it (an
    // HDMI or Bluetooth path): it is played this much earlier.
    uint32_t delay_ms = 0;
    std::optional<float> volume; // linear; unset: as its stream starts
    std::optional<bool> muted;
};

// [groups.NAME]: an RTP sink every room of a house receives, with the
// link offset they all play at and this machine's own sinks that play in
// step with them (engine/groups.h). The sink itself is in `sinks`, type
// "rtp", with the table's other keys as its options.
struct GroupConfig {
    static constexpr uint32_t kDefaultLinkOffsetMs = 150;
    // What a local member needs of the link offset, at least, once its
    // delay is taken off: time for the group's mix to reach it.
    static constexpr uint32_t kMinReplayMs = 20;

    std::string name;
    uint32_t link_offset_ms = kDefaultLinkOffsetMs;
    std::vector<GroupMember> local;
    unsigned line = 0;
};

// [pulse]: the PulseAudio-protocol server (pulse/pulse_server.h). Read at
// start; a reload keeps the running one.
struct PulseConfig {
    std::optional<bool> enable; // unset: on for a user's server on its default socket
    std::string socket;         // "": $XDG_RUNTIME_DIR/pulse/native
    bool shared_memory = true;  // audio in memfd pools from clients of our uid
    std::string tcp;            // "": no TCP listener; "PORT" (loopback) or "HOST:PORT"
    std::string cookie;         // "": $XDG_CONFIG_HOME/pulse/cookie, as libpulse reads it
};

struct ServerConfig {
    std::string source; // file it came from, for messages
    uint32_t rate = 48000;
    uint32_t channels = 2;
    uint32_t quantum = 256;
    int rt_priority = 20;
    uint32_t stall_timeout_ms = 1000;
    int resample_quality = 5;
    uint32_t client_memory_mb = 64; // shared memory one client's streams may hold
    std::string default_sink;
    // A capture source or "SINK.monitor"; "": the default sink's monitor.
    std::string default_source;
    std::vector<DeviceConfig> sinks;
    std::vector<DeviceConfig> sources; // [sources.NAME]: capture devices
    std::vector<GroupConfig> groups;   // [groups.NAME]; their sinks are in `sinks`
    std::vector<AppRule> apps;         // [apps.NAME]
    PulseConfig pulse;                 // [pulse]
};

// Parses configuration text; `source` names it in error messages. Returns
// the configuration or "SOURCE:LINE: reason". Never throws.
[[nodiscard]] std::variant<ServerConfig, std::string> parse_config(std::string_view text,
                                                                   const std::string& source);

// Reads and parses a file.
[[nodiscard]] std::variant<ServerConfig, std::string> load_config(const std::string& path);

// The configuration used when no file is found: one "auto" sink.
[[nodiscard]] ServerConfig builtin_config();

// Where to look when no --config is given, in order:
// $XDG_CONFIG_HOME/audiod/audiod.conf (default ~/.config), then the
// installed EXE_DIR/../share/audiod/audiod.conf. Returns "" if none exists.
// A system-wide server (audiod --system) looks in kSystemConfigPath instead
// of the user's folder.
[[nodiscard]] std::string find_config_file(bool system_wide = false);
inline constexpr const char* kSystemConfigPath = "/etc/audiod/audiod.conf";

} // namespace audiod
