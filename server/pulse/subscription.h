// SUBSCRIBE: audiod's engine events (what `audioctl watch` shows) as
// PulseAudio's subscription events — a facility (sink, source, sink input,
// source output, client, server) and what happened to which index (new,
// change, remove) — for the clients whose mask asks for that facility.
// Fed from the engine's event stream: nothing is polled. Thread: pulse.
#pragma once

#include "protocol/messages.h"
#include "pulse/introspection.h"

#include <cstdint>
#include <vector>

namespace audiod::pulse {

enum class Facility : uint32_t {
    sink = 0,
    source = 1,
    sink_input = 2,
    source_output = 3,
    module = 4,
    client = 5,
    sample_cache = 6,
    server = 7,
    card = 9,
};

enum class Happened : uint32_t { added = 0x00, changed = 0x10, removed = 0x20 };

struct SubscriptionEvent {
    Facility facility = Facility::server;
    Happened happened = Happened::changed;
    uint32_t index = kInvalidIndex;

    // SUBSCRIBE_EVENT's first field.
    [[nodiscard]] uint32_t word() const noexcept {
        return static_cast<uint32_t>(facility) | static_cast<uint32_t>(happened);
    }
    // The SUBSCRIBE mask bit that asks for it.
    [[nodiscard]] uint32_t mask_bit() const noexcept {
        return 1u << static_cast<uint32_t>(facility);
    }
    bool operator==(const SubscriptionEvent&) const = default;
};

// What an engine event is to pulse clients (none, one or more events). A
// stream's facility is a source output when it is on a known source.
[[nodiscard]] std::vector<SubscriptionEvent>
subscription_events(const proto::Event& event, DeviceIndices& sinks, DeviceIndices& sources);

} // namespace audiod::pulse
