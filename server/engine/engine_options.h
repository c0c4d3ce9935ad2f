// The options of a [sinks.NAME] or [sources.NAME] table (or of `audioctl
// load-sink/load-source`) that the engine reads itself; the module gets the
// rest. `quantum`, `rate` and `channels` set the device's own format; a
// source's `sink` and `play-latency-ms` relay it into a sink
// (engine/relays.h); `discover` makes it a finder of network sessions
// (engine/discovered_sources.h), which the module reads too.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <variant>
#include <vector>

namespace audiod {

using OptionList = std::vector<std::pair<std::string, std::string>>;

// What is asked of a group's room (Engine::control_group_room): the
// settings given, or to go back to its own.
struct GroupRoomRequest {
    bool reset = false;
    std::optional<double> volume;
    std::optional<bool> muted;
    std::optional<int32_t> delay_ms; // -1: the room's own
};

// Takes an option out of `options`. Returns its value (`fallback` when
// absent) or an error naming the allowed range.
[[nodiscard]] std::variant<uint32_t, std::string> take_uint_option(OptionList& options,
                                                                   const std::string& key,
                                                                   uint32_t fallback, uint32_t min,
                                                                   uint32_t max);

// Where a source plays, if anywhere: `sink = "SINK"`, with a queue of
// `play-latency-ms`.
struct RelayRequest {
    static constexpr uint32_t kDefaultLatencyMs = 20;

    std::string sink; // "" for nowhere
    uint32_t latency_ms = kDefaultLatencyMs;
    // A group's local member (engine/groups.h) rather than a source: what
    // the relayed sink plays is heard again on `sink` this long after (its
    // monitor, played in step with the rooms), and the playback stream
    // stays on `sink`. 0: the relayed device is a source.
    int64_t replayed_after_ns = 0;
    std::optional<float> volume; // the playback stream's start level
    std::optional<bool> muted;
};
// Takes `sink` and `play-latency-ms` out of a source's options; an error
// for a bad value.
[[nodiscard]] std::variant<RelayRequest, std::string> take_relay_request(OptionList& options);

// Whether a source's options say it finds sources (discover = true).
[[nodiscard]] bool finds_sources(const OptionList& options);

// A name a device may have: 1 to 64 letters, digits, '-', '_' or '.'.
[[nodiscard]] bool is_valid_device_name(const std::string& name);

} // namespace audiod
