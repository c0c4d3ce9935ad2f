// Commands for the devices' RT threads, kept in order.
//
// A device's own queue (Device::send) is bounded and never waits: when its
// RT thread falls behind, it can be full for a moment. A command that does
// not fit waits here, and so does every command after it, for any device,
// so that none overtakes another (a stream's detach must not pass the
// attach before it on another device). The engine retries them on every
// tick. Thread: control.
#pragma once

#include "device/messages.h"

#include <cstddef>
#include <utility>
#include <vector>

namespace audiod {

class Device;

class RtCommandQueue {
public:
    // Sends `command` to `device`'s RT thread now, or as soon as everything
    // before it has gone.
    void send(Device& device, const RtCommand& command);
    // Sends what waits, in order, as far as the devices take it.
    void retry();
    // Drops what waits for a device whose RT thread has stopped.
    void forget(const Device& device);
    void clear() { waiting_.clear(); }
    [[nodiscard]] size_t waiting() const noexcept { return waiting_.size(); }

private:
    std::vector<std::pair<Device*, RtCommand>> waiting_;
};

} // namespace audiod
