#include "engine/announcer.h"

#include "device/device.h"
#include "device/stream.h"

namespace audiod {

void Announcer::event(const proto::Event& event) const {
    if (observer_ != nullptr) {
        observer_->on_event(event);
    }
}

void Announcer::stream_event(const char* kind, const Stream& stream) const {
    proto::Event e;
    e.kind = kind;
    e.stream_id = stream.id;
    e.app = stream.app;
    e.device = endpoint_name(stream);
    e.state = announced_state(stream.id);
    e.volume = stream.volume;
    e.muted = stream.muted;
    event(e);
}

void Announcer::stream_moved(const Stream& stream, const std::string& previous) const {
    proto::Event e;
    e.kind = "stream-moved";
    e.stream_id = stream.id;
    e.app = stream.app;
    e.device = endpoint_name(stream);
    e.previous_device = previous;
    e.state = announced_state(stream.id);
    e.volume = stream.volume;
    e.muted = stream.muted;
    event(e);
}

void Announcer::device_state(const Device& device, const char* state) const {
    proto::Event e;
    e.kind = device.is_source() ? "source-changed" : "sink-changed";
    e.device = device.name();
    e.state = state;
    event(e);
}

void Announcer::device_opened(Device& device) const {
    if (observer_ != nullptr) {
        observer_->on_device_opened(device);
    }
}

void Announcer::device_closing(Device& device) const {
    if (observer_ != nullptr) {
        observer_->on_device_closing(device);
    }
}

void Announcer::client_fault(uint32_t client_id, const std::string& reason) const {
    if (observer_ != nullptr) {
        observer_->on_client_fault(client_id, reason);
    }
}

const std::string& Announcer::announced_state(uint32_t stream_id) const {
    static const std::string none;
    const auto it = announced_.find(stream_id);
    return it == announced_.end() ? none : it->second;
}

bool Announcer::set_announced_state(uint32_t stream_id, std::string state) {
    std::string& announced = announced_[stream_id];
    if (announced == state) {
        return false;
    }
    announced = std::move(state);
    return true;
}

std::string endpoint_name(const Stream& stream) {
    const Device& at = *stream.placement.destination();
    return at.name() + (stream.record && !at.is_source() ? std::string(kMonitorSuffix) : "");
}

std::string monitored_sink(const std::string& source) {
    const std::string_view suffix = kMonitorSuffix;
    if (source.size() > suffix.size() && source.ends_with(suffix)) {
        return source.substr(0, source.size() - suffix.size());
    }
    return "";
}

} // namespace audiod
