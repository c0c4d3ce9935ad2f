#include "engine/device_lifecycle.h"

#include "engine/discovered_sources.h"

#include "audiod/audiod.h"
#include "log.h"

#include <cstring>

namespace audiod {

DeviceLifecycle::DeviceLifecycle(DeviceRegistry& devices, StreamTable& streams, Router& router,
                                 Gains& gains, Relays& relays, DiscoveredSources& discovered,
                                 const Announcer& announcer)
    : devices_(devices)
    , streams_(streams)
    , router_(router)
    , gains_(gains)
    , relays_(relays)
    , discovered_(discovered)
    , announcer_(announcer) {}

DeviceRegistry::Entry& DeviceLifecycle::add(std::unique_ptr<Device> device, std::string type,
                                            OptionList options) {
    DeviceRegistry::Entry& added =
        devices_.add(std::move(device), std::move(type), std::move(options));
    router_.bring_back(*added.device);
    return added;
}

MaybeError DeviceLifecycle::load(DeviceKind kind, const std::string& type, const std::string& name,
                                 const OptionList& options) {
    const std::string what = device_kind_name(kind);
    if (!is_valid_device_name(name)) {
        return ClientError{AUDIOD_E_INVALID, "invalid " + what + " name '" + name +
                                                 "' (use letters, digits, '-', '_' and '.')"};
    }
    if (devices_.find_sink(name) != nullptr) {
        return ClientError{AUDIOD_E_INVALID, "a sink named '" + name + "' already exists"};
    }
    if (std::string taken; devices_.find_recordable(name, &taken) != nullptr) {
        return ClientError{AUDIOD_E_INVALID, "a source named '" + name + "' already exists"};
    }
    if (devices_.size() >= DeviceRegistry::kMaxDevices) {
        return ClientError{AUDIOD_E_BUSY, "too many sinks and sources (at most " +
                                              std::to_string(DeviceRegistry::kMaxDevices) + ")"};
    }
    OptionList device_options = options;
    RelayRequest relay;
    if (kind == DeviceKind::source) {
        auto taken = take_relay_request(device_options);
        if (auto* error = std::get_if<std::string>(&taken)) {
            return ClientError{AUDIOD_E_INVALID, "cannot load source '" + name + "': " + *error};
        }
        relay = std::get<RelayRequest>(taken);
        if (!relay.sink.empty() && devices_.find_sink(relay.sink) == nullptr) {
            return ClientError{AUDIOD_E_NOENTITY, "cannot load source '" + name +
                                                      "': no sink named '" + relay.sink + "'"};
        }
    }
    auto opened = devices_.open(type, name, device_options, kind);
    if (auto* error = std::get_if<std::string>(&opened)) {
        return ClientError{AUDIOD_E_REFUSED, "cannot load " + what + " '" + name + "': " + *error};
    }
    const bool finds = kind == DeviceKind::source && finds_sources(device_options);
    DeviceRegistry::Entry& added =
        add(std::move(std::get<std::unique_ptr<Device>>(opened)), type, std::move(device_options));
    if (finds) {
        added.passes_on = relay;
    } else if (!relay.sink.empty()) {
        if (const Status relaying = relays_.start(*added.device, relay); !relaying.ok()) {
            log_error("engine",
                      "source " + name + " is loaded but does not play: " + relaying.reason());
            return ClientError{AUDIOD_E_REFUSED,
                               "source '" + name +
                                   "' is loaded but does not play: " + relaying.reason()};
        }
    }
    return std::nullopt;
}

MaybeError DeviceLifecycle::unload(DeviceKind kind, const std::string& name) {
    Device* device = devices_.find(name, kind);
    if (device == nullptr) {
        return ClientError{AUDIOD_E_NOENTITY,
                           "no " + std::string(device_kind_name(kind)) + " named '" + name + "'"};
    }
    if (kind == DeviceKind::source) {
        relays_.stop(name);
        discovered_.close_found_by(name);
    } else {
        relays_.stop_replays_on(*device);
    }
    Device* fallback = devices_.fallback_for(*device);
    if (fallback == nullptr && streams_.count_on(*device) > 0) {
        return ClientError{AUDIOD_E_REFUSED,
                           "cannot unload '" + name + "': its streams have no other sink to go to"};
    }
    announcer_.device_closing(*device);
    // Stopping the RT thread first makes every stream on it ours alone, so
    // they can move without waiting for the device to hand them back.
    device->stop();
    router_.rescue_from(*device);
    const bool was_default = devices_.default_name() == name;
    devices_.remove(*device);
    log_info("engine", std::string(device_kind_name(kind)) + " unloaded name=" + name);
    proto::Event removed;
    removed.kind = kind == DeviceKind::source ? "source-removed" : "sink-removed";
    removed.device = name;
    announcer_.event(removed);
    if (was_default && fallback != nullptr) {
        devices_.change_default(fallback->name());
    }
    return std::nullopt;
}

MaybeError DeviceLifecycle::suspend(DeviceKind kind, const std::string& name, bool suspended) {
    Device* device = devices_.find(name, kind);
    if (device == nullptr) {
        return ClientError{AUDIOD_E_NOENTITY,
                           "no " + std::string(device_kind_name(kind)) + " named '" + name + "'"};
    }
    DeviceRegistry::Entry& entry = *devices_.entry_of(*device);
    const std::string what = std::string(device_kind_name(kind)) + " " + name;
    if (entry.suspended == suspended) {
        return std::nullopt;
    }
    entry.suspended = suspended;
    if (suspended) {
        if (!device->failed()) {
            // As after a failure: the RT thread joined, the module's
            // instance closed (the sound card free), the streams rescued
            // (or, with nowhere to go, waiting on it).
            device->release();
            device->mark_failed();
            entry.failure_announced = true;
            router_.rescue_from(*device);
        }
        announcer_.device_state(*device, "suspended");
        log_info("engine", what + " suspended");
        return std::nullopt;
    }
    auto opened = devices_.open(entry.configured_type, name, entry.options, kind);
    if (auto* error = std::get_if<std::string>(&opened)) {
        // A failed device from now on: retried every second.
        entry.next_reopen = std::chrono::steady_clock::now() + kReopenInterval;
        announcer_.device_state(*device, "failed");
        return ClientError{AUDIOD_E_BUSY,
                           "cannot reopen " + what + " (" + *error + "); retrying every second"};
    }
    swap(entry, std::move(std::get<std::unique_ptr<Device>>(opened)));
    log_info("engine", what + " resumed");
    return std::nullopt;
}

void DeviceLifecycle::swap(DeviceRegistry::Entry& entry, std::unique_ptr<Device> fresh) {
    announcer_.device_closing(*entry.device);
    // Streams still on the old device (whose RT thread is gone: it failed,
    // or was stopped to be replaced) land on the new one before the old one
    // is freed.
    const std::unique_ptr<Device> old = devices_.replace(entry, std::move(fresh));
    entry.suspended = false; // whatever closed it, it runs now
    Device& device = *entry.device;
    router_.replace(*old, device);
    gains_.apply_device(device);
    announcer_.device_opened(device);
    announcer_.device_state(device, "running");
    router_.bring_back(device);
}

void DeviceLifecycle::announce_failure(Device& device) {
    devices_.entry_of(device)->failure_announced = true;
    router_.rescue_from(device);
    announcer_.device_state(device, "failed");
}

void DeviceLifecycle::failed(Device& device, int64_t error) {
    log_error("engine", std::string(device_kind_name(device.kind())) + " " + device.name() +
                            " failed: " + std::strerror(static_cast<int>(-error)));
    // The RT thread has left its loop; releasing the device joins it, which
    // makes its streams ours, and closes the module's instance now: the
    // module may need it closed to find the device again when it is
    // reopened.
    device.release();
    announce_failure(device);
}

void DeviceLifecycle::reopen_failed(std::chrono::steady_clock::time_point now) {
    for (DeviceRegistry::Reopened& reopened : devices_.reopen_failed(now)) {
        const std::string what =
            std::string(device_kind_name(reopened.fresh->kind())) + " " + reopened.fresh->name();
        swap(*reopened.entry, std::move(reopened.fresh));
        log_info("engine", what + " is back");
    }
}

Status DeviceLifecycle::reopen(const DeviceConfig& device, DeviceKind kind) {
    if (kind == DeviceKind::source) {
        // A source's recordings are rescued to the default sink's monitor
        // and brought back when it is open again, as for a source unloaded
        // and loaded by hand; its relay starts afresh.
        if (MaybeError error = unload(kind, device.name)) {
            return Status::failure(error->message);
        }
        if (MaybeError error = load(kind, device.type, device.name, device.options)) {
            return Status::failure(error->message);
        }
        return Status::success();
    }
    Device* running = devices_.find_sink(device.name);
    if (running == nullptr) {
        return Status::failure("sink '" + device.name + "' is not running");
    }
    DeviceRegistry::Entry& entry = *devices_.entry_of(*running);
    // In place, so that a sink that is the only one keeps its streams: the
    // old device is closed first (a sound card opens once), the new one
    // opened, and the streams land on it where they were.
    entry.device->release();
    auto opened = devices_.open(device.type, device.name, device.options, kind);
    if (auto* error = std::get_if<std::string>(&opened)) {
        const std::string reason = *error;
        auto restored = devices_.open(entry.configured_type, device.name, entry.options, kind);
        if (std::holds_alternative<std::unique_ptr<Device>>(restored)) {
            swap(entry, std::move(std::get<std::unique_ptr<Device>>(restored)));
            return Status::failure("cannot open sink '" + device.name +
                                   "' with its new settings (" + reason +
                                   "); it keeps its old ones");
        }
        // Neither opens: it is a failed sink, retried with the new settings.
        entry.configured_type = device.type;
        entry.options = device.options;
        entry.next_reopen = std::chrono::steady_clock::now() + kReopenInterval;
        entry.device->mark_failed();
        announce_failure(*entry.device);
        return Status::failure("cannot open sink '" + device.name + "' (" + reason +
                               "); retrying every second");
    }
    entry.configured_type = device.type;
    entry.options = device.options;
    swap(entry, std::move(std::get<std::unique_ptr<Device>>(opened)));
    return Status::success();
}

} // namespace audiod
