// What the engine tells the control server (its EngineObserver): events for
// the clients that listen (`audioctl watch`), the devices whose RT event fd
// to watch, and clients to drop. Every part of the engine announces through
// it, so that an event always carries the stream's state as last
// announced. Thread: control.
#pragma once

#include "protocol/messages.h"

#include <cstdint>
#include <map>
#include <string>

namespace audiod {

class Device;
struct Stream;

// Implemented by the control server.
class EngineObserver {
public:
    virtual ~EngineObserver() = default;
    virtual void on_event(const proto::Event& event) = 0;
    // A device's RT event fd to watch, or to stop watching.
    virtual void on_device_opened(Device& device) = 0;
    virtual void on_device_closing(Device& device) = 0;
    // The client must be disconnected (it corrupted its ring).
    virtual void on_client_fault(uint32_t client_id, const std::string& reason) = 0;
};

class Announcer {
public:
    void set_observer(EngineObserver* observer) noexcept { observer_ = observer; }

    void event(const proto::Event& event) const;
    // "stream-added", "stream-changed" ... with the stream's id,
    // application, where it is, its volume and its state as last announced.
    void stream_event(const char* kind, const Stream& stream) const;
    // "stream-moved" from `previous` (a device name, or SINK.monitor).
    void stream_moved(const Stream& stream, const std::string& previous) const;
    // "sink-changed" (a source: "source-changed") with a state ("running",
    // "stalled", "failed").
    void device_state(const Device& device, const char* state) const;

    void device_opened(Device& device) const;
    void device_closing(Device& device) const;
    void client_fault(uint32_t client_id, const std::string& reason) const;

    // The state last announced for a stream ("" before any).
    [[nodiscard]] const std::string& announced_state(uint32_t stream_id) const;
    // Records `state` as announced; false if it was already.
    bool set_announced_state(uint32_t stream_id, std::string state);
    void forget(uint32_t stream_id) { announced_.erase(stream_id); }

private:
    EngineObserver* observer_ = nullptr;
    std::map<uint32_t, std::string> announced_;
};

// Where a stream is (or is going): its device's name, or "SINK.monitor"
// for a record stream on a sink. Thread: control.
[[nodiscard]] std::string endpoint_name(const Stream& stream);

// Every sink is also a source, its monitor, named SINK + this.
inline constexpr std::string_view kMonitorSuffix = ".monitor";
// The sink a source name monitors ("out.monitor" -> "out"), or "".
[[nodiscard]] std::string monitored_sink(const std::string& source);

} // namespace audiod
