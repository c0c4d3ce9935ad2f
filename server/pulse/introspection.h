// What libpulse's introspection shows (pactl list, pavucontrol, an
// application looking up its sink's rate), written from a snapshot of the
// engine: audiod's sinks are pulse sinks, its sources (every sink's
// monitor, then the capture devices) pulse sources, its playback streams
// sink inputs and its record streams source outputs — a libaudiod
// program's and a relay's as well as a libpulse one's.
//
// Indices. A sink's and a source's index is given the first time the pulse
// thread sees its name, and stays its own (a sink reloaded under the same
// name keeps it; no other sink takes it): what a client learnt by index
// stays true. A stream's index is its engine id.
// A libpulse connection is the client of its own index; a libaudiod client
// is shown at kNativeClientBase + its engine id; a relay's streams belong
// to no client. Every entry is written with the fields of the client's
// protocol version. Thread: any (pure, on the snapshot).
#pragma once

#include "protocol/messages.h"
#include "pulse/tagstruct.h"

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace audiod::pulse {

inline constexpr uint32_t kNativeClientBase = 0x40000000u;

// Taken on the control thread, read on the pulse thread.
struct EngineSnapshot {
    std::vector<proto::SinkInfo> sinks;
    std::vector<proto::SourceInfo> sources;
    std::vector<proto::StreamInfo> streams;
    std::string default_sink;
    std::string default_source; // the engine's ("": the default sink's monitor)
    // Engine client ids from here on are libpulse connections.
    uint32_t pulse_client_base = 0x80000000u;
    // Each sink's and source's pulse index, beside the lists (number()).
    std::vector<uint32_t> sink_indices;
    std::vector<uint32_t> source_indices;
    // Sinks that pulse modules stand for, by name (pulse_modules.h).
    struct ModuleSink {
        uint32_t module = kInvalidIndex;
        std::string description; // the module arguments' own, if any
    };
    std::map<std::string, ModuleSink> module_sinks;
};

// Pulse indices of devices by name, given on first sight. Thread: pulse.
class DeviceIndices {
public:
    uint32_t index(const std::string& name);
    [[nodiscard]] std::optional<std::string> name(uint32_t index) const;
    [[nodiscard]] bool known(const std::string& name) const { return by_name_.count(name) != 0; }

private:
    std::map<std::string, uint32_t> by_name_;
    uint32_t next_ = 0;
};

// Gives the snapshot's devices their indices. Thread: pulse.
void number(EngineSnapshot& snapshot, DeviceIndices& sinks, DeviceIndices& sources);

// What the pulse thread knows of a libpulse stream beyond the engine: its
// property list (media.name...) and, for a playback stream, its latency as
// GET_PLAYBACK_LATENCY reports it: what is queued and the sink's delay.
struct PulseStreamFacts {
    PropertyList properties;
    std::optional<uint64_t> buffer_usec; // none: the ring's size is shown
    uint64_t sink_usec = 0;
};

// A sink or source (its place in the snapshot's list) by index (in a
// numbered snapshot) or by name (null, "@DEFAULT_SINK@", "@DEFAULT_SOURCE@",
// "@DEFAULT_MONITOR@": the default); nullopt if none.
[[nodiscard]] std::optional<uint32_t> find_sink(const EngineSnapshot& snapshot, uint32_t index,
                                                const std::optional<std::string>& name);
[[nodiscard]] std::optional<uint32_t> find_source(const EngineSnapshot& snapshot, uint32_t index,
                                                  const std::optional<std::string>& name);
[[nodiscard]] std::string default_source(const EngineSnapshot& snapshot);

// The sink a stream asks for by name (none or @DEFAULT_SINK@: the
// default), and its latency: its own buffer and one cycle.
struct ChosenSink {
    std::string name;
    uint64_t latency_usec = 0;
};
[[nodiscard]] std::optional<ChosenSink> choose_sink(const std::vector<proto::SinkInfo>& sinks,
                                                    const std::string& name);

// A linear gain as a pulse volume (cubic; 0x10000 is 100 %).
[[nodiscard]] uint32_t pulse_volume(float gain) noexcept;
// The same on every one of `channels`.
[[nodiscard]] ChannelVolumes channel_volumes(float gain, uint32_t channels);

void put_sink(TagWriter& w, const EngineSnapshot& snapshot, uint32_t index, uint32_t version);
void put_source(TagWriter& w, const EngineSnapshot& snapshot, uint32_t index, uint32_t version);
// `pulse`: what the pulse thread knows of it, if it is a libpulse stream.
void put_sink_input(TagWriter& w, const EngineSnapshot& snapshot, const proto::StreamInfo& stream,
                    const PulseStreamFacts* pulse, uint32_t version);
void put_source_output(TagWriter& w, const EngineSnapshot& snapshot,
                       const proto::StreamInfo& stream, const PulseStreamFacts* pulse,
                       uint32_t version);
void put_client(TagWriter& w, uint32_t index, const std::string& name,
                const PropertyList& properties, uint32_t version);

// The pulse client index of an engine stream's client (kInvalidIndex: a
// relay's), given the engine id range of libpulse clients.
[[nodiscard]] uint32_t pulse_client_of(uint32_t engine_client, uint32_t pulse_base) noexcept;

} // namespace audiod::pulse
