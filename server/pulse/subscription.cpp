#include "pulse/subscription.h"

#include <string_view>

namespace audiod::pulse {

namespace {

std::optional<Happened> happened_of(std::string_view kind, std::string_view subject) {
    if (kind.substr(0, subject.size()) != subject) {
        return std::nullopt;
    }
    const std::string_view what = kind.substr(subject.size());
    if (what == "-added") {
        return Happened::added;
    }
    if (what == "-changed" || what == "-moved") {
        return Happened::changed;
    }
    if (what == "-removed") {
        return Happened::removed;
    }
    return std::nullopt;
}

} // namespace

std::vector<SubscriptionEvent> subscription_events(const proto::Event& event, DeviceIndices& sinks,
                                                   DeviceIndices& sources) {
    std::vector<SubscriptionEvent> events;
    if (const auto happened = happened_of(event.kind, "sink")) {
        events.push_back({Facility::sink, *happened, sinks.index(event.device)});
        // Its monitor comes and goes with it.
        if (*happened != Happened::changed) {
            events.push_back(
                {Facility::source, *happened, sources.index(event.device + ".monitor")});
        }
    } else if (const auto source = happened_of(event.kind, "source")) {
        events.push_back({Facility::source, *source, sources.index(event.device)});
    } else if (const auto stream = happened_of(event.kind, "stream")) {
        const bool record = sources.known(event.device);
        events.push_back(
            {record ? Facility::source_output : Facility::sink_input, *stream, event.stream_id});
    } else if (event.kind == "default-changed" || event.kind == "default-source-changed") {
        events.push_back({Facility::server, Happened::changed, kInvalidIndex});
    }
    return events;
}

} // namespace audiod::pulse
