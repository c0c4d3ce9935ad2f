#include "pulse/introspection.h"

#include "pulse/sample_spec.h"
#include "pulse/server_facts.h"

#include <algorithm>
#include <cmath>

namespace audiod::pulse {

namespace {

// PA_SINK_LATENCY | PA_SINK_DECIBEL_VOLUME (the same bits for sources):
// its latency can be asked, its volume is in software on a dB scale.
constexpr uint32_t kDeviceFlags = 0x02 | 0x20;
// The device states libpulse knows: running, idle, suspended.
constexpr uint32_t kRunning = 0;
constexpr uint32_t kSuspended = 2;
constexpr uint32_t kVolumeSteps = 65537; // a software volume's
constexpr const char* kDriver = "audiod";

SampleSpec spec_of_device(uint32_t format, uint32_t rate, uint32_t channels) {
    return {pulse_format(static_cast<audiod::SampleFormat>(format)), static_cast<uint8_t>(channels),
            rate};
}

uint64_t usec_of(uint64_t frames, uint32_t rate) {
    return rate == 0 ? 0 : frames * 1000000 / rate;
}

std::optional<uint32_t> sink_named(const EngineSnapshot& snapshot, const std::string& name) {
    for (uint32_t i = 0; i < snapshot.sinks.size(); ++i) {
        if (snapshot.sinks[i].name == name) {
            return i;
        }
    }
    return std::nullopt;
}

std::optional<uint32_t> source_named(const EngineSnapshot& snapshot, const std::string& name) {
    for (uint32_t i = 0; i < snapshot.sources.size(); ++i) {
        if (snapshot.sources[i].name == name) {
            return i;
        }
    }
    return std::nullopt;
}

// The pulse index of the sink or source at a place in the lists.
uint32_t sink_index_at(const EngineSnapshot& snapshot, std::optional<uint32_t> place) {
    return place && *place < snapshot.sink_indices.size() ? snapshot.sink_indices[*place]
                                                          : kInvalidIndex;
}

uint32_t source_index_at(const EngineSnapshot& snapshot, std::optional<uint32_t> place) {
    return place && *place < snapshot.source_indices.size() ? snapshot.source_indices[*place]
                                                            : kInvalidIndex;
}

FormatInfo any_pcm() {
    FormatInfo info;
    info.encoding = 1; // PCM
    return info;
}

// A device with no ports, as a software sink or source has.
void put_no_ports(TagWriter& w) {
    w.put_u32(0);
    w.put_null_string();
}

void put_stream_properties(TagWriter& w, const proto::StreamInfo& stream,
                           const PulseStreamFacts* pulse) {
    PropertyList properties = pulse != nullptr ? pulse->properties : PropertyList{};
    set_property(properties, "application.name", stream.app);
    if (stream.pid != 0) {
        set_property(properties, "application.process.id", std::to_string(stream.pid));
    }
    if (!properties.count("media.name")) {
        set_property(properties, "media.name", stream.app);
    }
    w.put_proplist(properties);
}

std::string stream_name(const proto::StreamInfo& stream, const PulseStreamFacts* pulse) {
    if (pulse != nullptr) {
        if (auto name = property_string(pulse->properties, "media.name"); name && !name->empty()) {
            return *name;
        }
    }
    return stream.app;
}

} // namespace

uint32_t pulse_volume(float gain) noexcept {
    if (!(gain > 0.0f)) {
        return 0;
    }
    return static_cast<uint32_t>(std::lround(std::cbrt(static_cast<double>(gain)) * kNormVolume));
}

ChannelVolumes channel_volumes(float gain, uint32_t channels) {
    return {std::vector<uint32_t>(channels, pulse_volume(gain))};
}

std::string default_source(const EngineSnapshot& snapshot) {
    if (!snapshot.default_source.empty()) {
        return snapshot.default_source;
    }
    return snapshot.default_sink.empty() ? "" : snapshot.default_sink + ".monitor";
}

uint32_t DeviceIndices::index(const std::string& name) {
    const auto [at, added] = by_name_.try_emplace(name, next_);
    if (added) {
        ++next_;
    }
    return at->second;
}

std::optional<std::string> DeviceIndices::name(uint32_t index) const {
    for (const auto& [name, given] : by_name_) {
        if (given == index) {
            return name;
        }
    }
    return std::nullopt;
}

void number(EngineSnapshot& snapshot, DeviceIndices& sinks, DeviceIndices& sources) {
    snapshot.sink_indices.clear();
    for (const proto::SinkInfo& sink : snapshot.sinks) {
        snapshot.sink_indices.push_back(sinks.index(sink.name));
    }
    snapshot.source_indices.clear();
    for (const proto::SourceInfo& source : snapshot.sources) {
        snapshot.source_indices.push_back(sources.index(source.name));
    }
}

std::optional<uint32_t> find_sink(const EngineSnapshot& snapshot, uint32_t index,
                                  const std::optional<std::string>& name) {
    if (index != kInvalidIndex) {
        const auto at =
            std::find(snapshot.sink_indices.begin(), snapshot.sink_indices.end(), index);
        return at == snapshot.sink_indices.end()
                   ? std::nullopt
                   : std::optional(static_cast<uint32_t>(at - snapshot.sink_indices.begin()));
    }
    if (!name || *name == "@DEFAULT_SINK@") {
        return sink_named(snapshot, snapshot.default_sink);
    }
    return sink_named(snapshot, *name);
}

std::optional<uint32_t> find_source(const EngineSnapshot& snapshot, uint32_t index,
                                    const std::optional<std::string>& name) {
    if (index != kInvalidIndex) {
        const auto at =
            std::find(snapshot.source_indices.begin(), snapshot.source_indices.end(), index);
        return at == snapshot.source_indices.end()
                   ? std::nullopt
                   : std::optional(static_cast<uint32_t>(at - snapshot.source_indices.begin()));
    }
    if (!name || *name == "@DEFAULT_SOURCE@" || *name == "@DEFAULT_MONITOR@") {
        return source_named(snapshot, default_source(snapshot));
    }
    return source_named(snapshot, *name);
}

std::optional<ChosenSink> choose_sink(const std::vector<proto::SinkInfo>& sinks,
                                      const std::string& name) {
    const bool by_default = name.empty() || name == "@DEFAULT_SINK@";
    for (const proto::SinkInfo& sink : sinks) {
        if ((by_default ? sink.is_default : sink.name == name) && sink.rate > 0) {
            return ChosenSink{sink.name,
                              (uint64_t{sink.latency_frames} + sink.quantum) * 1000000 / sink.rate};
        }
    }
    return std::nullopt;
}

uint32_t pulse_client_of(uint32_t engine_client, uint32_t pulse_base) noexcept {
    if (engine_client == 0) {
        return kInvalidIndex;
    }
    return engine_client >= pulse_base ? engine_client - pulse_base
                                       : kNativeClientBase + engine_client;
}

void put_sink(TagWriter& w, const EngineSnapshot& snapshot, uint32_t index, uint32_t version) {
    const proto::SinkInfo& sink = snapshot.sinks[index];
    const auto module = snapshot.module_sinks.find(sink.name);
    const bool by_module = module != snapshot.module_sinks.end();
    const std::string description = by_module && !module->second.description.empty()
                                        ? module->second.description
                                        : sink.name + " (audiod " + sink.type + " sink)";
    const SampleSpec spec = spec_of_device(sink.format, sink.rate, sink.channels);
    const std::string monitor = sink.name + ".monitor";
    w.put_u32(sink_index_at(snapshot, index));
    w.put_string(sink.name);
    w.put_string(description);
    w.put_sample_spec(spec);
    w.put_channel_map(standard_channel_map(sink.channels));
    w.put_u32(by_module ? module->second.module : kInvalidIndex);
    w.put_channel_volumes(channel_volumes(sink.volume, sink.channels));
    w.put_bool(sink.muted);
    const auto monitor_index = source_named(snapshot, monitor);
    w.put_u32(source_index_at(snapshot, monitor_index));
    w.put_optional_string(monitor_index ? std::optional(monitor) : std::nullopt);
    w.put_usec(usec_of(uint64_t{sink.latency_frames} + sink.quantum, sink.rate));
    w.put_string(kDriver);
    w.put_u32(kDeviceFlags);
    if (version >= 13) {
        PropertyList properties;
        set_property(properties, "device.description", description);
        set_property(properties, "device.class", "sound");
        set_property(properties, "audiod.type", sink.type);
        w.put_proplist(properties);
        w.put_usec(usec_of(sink.quantum, sink.rate));
    }
    if (version >= 15) {
        w.put_volume(kNormVolume);
        w.put_u32(sink.state == "running" ? kRunning : kSuspended);
        w.put_u32(kVolumeSteps);
        w.put_u32(kInvalidIndex); // card
    }
    if (version >= 16) {
        put_no_ports(w);
    }
    if (version >= 21) {
        // PCM of any kind: audiod converts (one named kind here would have
        // GStreamer's pulsesink refuse every other).
        w.put_u8(1);
        w.put_format_info(any_pcm());
    }
}

void put_source(TagWriter& w, const EngineSnapshot& snapshot, uint32_t index, uint32_t version) {
    const proto::SourceInfo& source = snapshot.sources[index];
    const bool monitor = source.type == "monitor";
    // A plain index, not an optional: GCC 12 -O3 took the optional built by
    // a conditional for uninitialised (-Wmaybe-uninitialized).
    const uint32_t of_sink =
        monitor ? sink_named(snapshot, source.sink).value_or(kInvalidIndex) : kInvalidIndex;
    const std::string description = monitor ? "Monitor of " + source.sink
                                            : source.name + " (audiod " + source.type + " source)";
    const proto::SinkInfo* sink = of_sink != kInvalidIndex ? &snapshot.sinks[of_sink] : nullptr;
    const uint32_t format =
        sink != nullptr ? sink->format : static_cast<uint32_t>(audiod::SampleFormat::f32le);
    const SampleSpec spec = spec_of_device(format, source.rate, source.channels);
    w.put_u32(source_index_at(snapshot, index));
    w.put_string(source.name);
    w.put_string(description);
    w.put_sample_spec(spec);
    w.put_channel_map(standard_channel_map(source.channels));
    w.put_u32(kInvalidIndex); // owner module
    w.put_channel_volumes(channel_volumes(source.volume, source.channels));
    w.put_bool(source.muted);
    w.put_u32(sink != nullptr ? sink_index_at(snapshot, of_sink) : kInvalidIndex);
    w.put_optional_string(sink != nullptr ? std::optional(source.sink) : std::nullopt);
    w.put_usec(usec_of(source.latency_frames, source.rate));
    w.put_string(kDriver);
    w.put_u32(kDeviceFlags);
    if (version >= 13) {
        PropertyList properties;
        set_property(properties, "device.description", description);
        set_property(properties, "device.class", monitor ? "monitor" : "sound");
        set_property(properties, "audiod.type", source.type);
        w.put_proplist(properties);
        w.put_usec(sink != nullptr ? usec_of(sink->quantum, sink->rate) : 0);
    }
    if (version >= 15) {
        w.put_volume(kNormVolume);
        w.put_u32(source.state == "running" ? kRunning : kSuspended);
        w.put_u32(kVolumeSteps);
        w.put_u32(kInvalidIndex); // card
    }
    if (version >= 16) {
        put_no_ports(w);
    }
    if (version >= 22) {
        // PCM of any kind: audiod converts (one named kind here would have
        // GStreamer's pulsesink refuse every other).
        w.put_u8(1);
        w.put_format_info(any_pcm());
    }
}

void put_sink_input(TagWriter& w, const EngineSnapshot& snapshot, const proto::StreamInfo& stream,
                    const PulseStreamFacts* pulse, uint32_t version) {
    const SampleSpec spec = spec_of_device(stream.format, stream.rate, stream.channels);
    w.put_u32(stream.id);
    w.put_string(stream_name(stream, pulse));
    w.put_u32(kInvalidIndex); // owner module
    w.put_u32(pulse_client_of(stream.client_id, snapshot.pulse_client_base));
    w.put_u32(sink_index_at(snapshot, sink_named(snapshot, stream.device)));
    w.put_sample_spec(spec);
    w.put_channel_map(standard_channel_map(stream.channels));
    w.put_channel_volumes(channel_volumes(stream.volume, stream.channels));
    // A libpulse stream's queue and its sink's delay, as its player's own
    // clock counts them; another stream's ring.
    const bool timed = pulse != nullptr && pulse->buffer_usec;
    w.put_usec(timed ? *pulse->buffer_usec : usec_of(stream.buffer_frames, stream.rate));
    w.put_usec(timed ? pulse->sink_usec : 0);
    w.put_string("audiod");
    w.put_string(kDriver);
    if (version >= 11) {
        w.put_bool(stream.muted);
    }
    if (version >= 13) {
        put_stream_properties(w, stream, pulse);
    }
    if (version >= 19) {
        w.put_bool(stream.state == "paused");
    }
    if (version >= 20) {
        w.put_bool(true); // has a volume
        w.put_bool(true); // that can be set
    }
    if (version >= 21) {
        w.put_format_info(pcm_format_info(spec, standard_channel_map(stream.channels)));
    }
}

void put_source_output(TagWriter& w, const EngineSnapshot& snapshot,
                       const proto::StreamInfo& stream, const PulseStreamFacts* pulse,
                       uint32_t version) {
    const SampleSpec spec = spec_of_device(stream.format, stream.rate, stream.channels);
    w.put_u32(stream.id);
    w.put_string(stream_name(stream, pulse));
    w.put_u32(kInvalidIndex); // owner module
    w.put_u32(pulse_client_of(stream.client_id, snapshot.pulse_client_base));
    w.put_u32(source_index_at(snapshot, source_named(snapshot, stream.device)));
    w.put_sample_spec(spec);
    w.put_channel_map(standard_channel_map(stream.channels));
    w.put_usec(usec_of(stream.buffer_frames, stream.rate));
    w.put_usec(0);
    w.put_string("audiod");
    w.put_string(kDriver);
    if (version >= 13) {
        put_stream_properties(w, stream, pulse);
    }
    if (version >= 19) {
        w.put_bool(stream.state == "paused");
    }
    if (version >= 22) {
        w.put_channel_volumes(channel_volumes(stream.volume, stream.channels));
        w.put_bool(stream.muted);
        w.put_bool(true); // has a volume
        w.put_bool(true); // that can be set
        w.put_format_info(pcm_format_info(spec, standard_channel_map(stream.channels)));
    }
}

void put_client(TagWriter& w, uint32_t index, const std::string& name,
                const PropertyList& properties, uint32_t version) {
    w.put_u32(index);
    w.put_string(name);
    w.put_u32(kInvalidIndex); // owner module
    w.put_string(kDriver);
    if (version >= 13) {
        w.put_proplist(properties);
    }
}

} // namespace audiod::pulse
