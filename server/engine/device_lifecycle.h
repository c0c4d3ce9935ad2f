// Devices coming and going while streams play: opened and closed at run
// time (`audioctl load-sink`, a reload, a discovered session), failing,
// reopened once a second until they are back, replaced in place with new
// settings. Each of these touches several parts — the registry, the
// streams on the device (router), its relay, the sources it found, its
// gain, the listeners — and this is where they are done together.
// Thread: control.
#pragma once

#include "engine/announcer.h"
#include "engine/client_error.h"
#include "engine/device_registry.h"
#include "engine/gains.h"
#include "engine/relays.h"
#include "engine/router.h"
#include "engine/stream_table.h"

#include <chrono>
#include <memory>
#include <string>

namespace audiod {

class DiscoveredSources;

class DeviceLifecycle {
public:
    DeviceLifecycle(DeviceRegistry& devices, StreamTable& streams, Router& router, Gains& gains,
                    Relays& relays, DiscoveredSources& discovered, const Announcer& announcer);

    // Keeps a device opened at start; streams that belong there come back.
    DeviceRegistry::Entry& add(std::unique_ptr<Device> device, std::string type,
                               OptionList options);
    // A sink or capture source opened at run time, relayed if its options
    // say so.
    [[nodiscard]] MaybeError load(DeviceKind kind, const std::string& type, const std::string& name,
                                  const OptionList& options);
    // Closes a device; its streams move to the default sink (record
    // streams: to its monitor), its relay and the sources it found close.
    [[nodiscard]] MaybeError unload(DeviceKind kind, const std::string& name);
    // Closes a device at a client's request (pasuspender, SUSPEND_SINK),
    // freeing the sound card for another program: its streams are rescued
    // as from a failed device (to the default sink; a capture source's
    // recordings to its monitor) and it is not reopened until resumed
    // (`suspended` false), when they come back. Either is a no-op when the
    // device already is so.
    [[nodiscard]] MaybeError suspend(DeviceKind kind, const std::string& name, bool suspended);
    // Reopens a running device with new settings, in place: a sink keeps
    // its streams; a source is closed and opened again.
    [[nodiscard]] Status reopen(const DeviceConfig& device, DeviceKind kind);

    // The device's RT thread stopped on error `error` (negative errno).
    void failed(Device& device, int64_t error);
    // What a failed device's streams and listeners learn (after its RT
    // thread has stopped, or been abandoned).
    void announce_failure(Device& device);
    // Reopens the failed devices whose turn it is.
    void reopen_failed(std::chrono::steady_clock::time_point now);

private:
    // Puts a reopened device in its entry's place; the old one's streams
    // land on it.
    void swap(DeviceRegistry::Entry& entry, std::unique_ptr<Device> fresh);

    DeviceRegistry& devices_;
    StreamTable& streams_;
    Router& router_;
    Gains& gains_;
    Relays& relays_;
    DiscoveredSources& discovered_;
    const Announcer& announcer_;
};

} // namespace audiod
