#include "engine/discovered_sources.h"

#include "engine/device_lifecycle.h"

#include "log.h"

namespace audiod {

DiscoveredSources::DiscoveredSources(DeviceLifecycle& lifecycle, DeviceRegistry& devices)
    : lifecycle_(lifecycle)
    , devices_(devices) {}

void DiscoveredSources::request(const audiod_host* host, const char* requester, const char* type,
                                const char* name, const audiod_option* options, size_t option_count,
                                int remove) {
    if (host == nullptr || host->server == nullptr || requester == nullptr || type == nullptr ||
        name == nullptr) {
        return;
    }
    Request request{requester, type, name, {}, remove != 0};
    for (size_t i = 0; i < option_count && options != nullptr; ++i) {
        if (options[i].key != nullptr && options[i].value != nullptr) {
            request.options.emplace_back(options[i].key, options[i].value);
        }
    }
    auto* self = static_cast<DiscoveredSources*>(host->server);
    const std::lock_guard lock(self->mutex_);
    self->requests_.push_back(std::move(request));
}

void DiscoveredSources::handle() {
    std::vector<Request> requests;
    {
        const std::lock_guard lock(mutex_);
        requests.swap(requests_);
    }
    for (Request& request : requests) {
        const DeviceRegistry::Entry* finder = nullptr;
        if (Device* found_by = devices_.find(request.requester, DeviceKind::source)) {
            finder = devices_.entry_of(*found_by);
        }
        if (finder == nullptr) {
            continue; // its finder is gone, and what it found with it
        }
        const DeviceRegistry::Entry* found = devices_.entry_named(request.name);
        if (request.remove) {
            if (found != nullptr && found->found_by == request.requester) {
                log_info("engine", "source " + request.name + " is gone from " + request.requester +
                                       "'s announcements");
                (void)lifecycle_.unload(DeviceKind::source, request.name);
            }
            continue;
        }
        if (found != nullptr) {
            continue; // found before, or the name is taken
        }
        OptionList options = std::move(request.options);
        const RelayRequest relay = finder->passes_on;
        if (!relay.sink.empty()) {
            options.emplace_back("sink", relay.sink);
            options.emplace_back("play-latency-ms", std::to_string(relay.latency_ms));
        }
        if (const MaybeError error =
                lifecycle_.load(DeviceKind::source, request.type, request.name, options)) {
            log_warning("engine",
                        request.requester + " found a source it cannot open: " + error->message);
            continue;
        }
        if (DeviceRegistry::Entry* opened = devices_.entry_named(request.name)) {
            opened->found_by = request.requester;
        }
        log_info("engine", request.requester + " found source " + request.name);
    }
}

void DiscoveredSources::close_found_by(const std::string& finder) {
    std::vector<std::string> found;
    for (const auto& entry : devices_.entries()) {
        if (entry->found_by == finder) {
            found.push_back(entry->device->name());
        }
    }
    for (const std::string& name : found) {
        (void)lifecycle_.unload(DeviceKind::source, name);
    }
}

} // namespace audiod
