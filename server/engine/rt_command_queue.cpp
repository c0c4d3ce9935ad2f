#include "engine/rt_command_queue.h"

#include "device/device.h"

#include <algorithm>

namespace audiod {

void RtCommandQueue::send(Device& device, const RtCommand& command) {
    if (!waiting_.empty() || !device.send(command)) {
        waiting_.emplace_back(&device, command);
    }
}

void RtCommandQueue::retry() {
    size_t sent = 0;
    while (sent < waiting_.size() && waiting_[sent].first->send(waiting_[sent].second)) {
        ++sent;
    }
    waiting_.erase(waiting_.begin(), waiting_.begin() + static_cast<std::ptrdiff_t>(sent));
}

void RtCommandQueue::forget(const Device& device) {
    std::erase_if(waiting_, [&](const auto& entry) { return entry.first == &device; });
}

} // namespace audiod
