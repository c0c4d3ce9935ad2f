// Every device the engine has opened — sinks and capture sources — with
// what the engine keeps of each: how it was configured (to reopen it),
// its volume, whether its failure has been handled, what the RT watchdog
// last saw of it. Finds devices by name and direction, knows the default
// sink and where streams go when a device leaves, opens devices through
// their modules, and reopens failed ones once a second until they are back.
// Thread: control.
#pragma once

#include "config/config.h"
#include "device/device.h"
#include "engine/announcer.h"
#include "engine/engine_options.h"
#include "engine/module_loader.h"

#include <chrono>
#include <memory>
#include <string>
#include <utility>
#include <variant>
#include <vector>

namespace audiod {

class DeviceRegistry {
public:
    static constexpr size_t kMaxDevices = audiod::kMaxDevices; // config/config.h

    struct Entry {
        std::unique_ptr<Device> device;
        // As configured: "auto" stays "auto" here, and the options are the
        // module's (the engine's own are taken out), to reopen it.
        std::string configured_type;
        OptionList options;
        // Closed at a client's request (SUSPEND_SINK, pasuspender): shown
        // as failed to the router, so that its streams are rescued and
        // come back as from a failure, but not reopened until resumed.
        bool suspended = false;
        // A failed device is reopened from then on, once a second, until
        // it is back.
        std::chrono::steady_clock::time_point next_reopen{};
        // The engine has handled the failure (logged it, rescued the
        // streams): only then is the device reopened. failed() comes
        // first, from the RT thread, a moment before its event.
        bool failure_announced = false;
        // A source that finds sources (discover = true) passes its relay
        // request on to them; a source it found names it here.
        RelayRequest passes_on;
        std::string found_by;
        // The device's own gain (a sink's or a capture source's), kept
        // across a reopen.
        float volume = 1.0f;
        bool muted = false;
        // What the RT watchdog last saw of it (engine/rt_watchdog.h).
        struct Progress {
            uint64_t frames = 0;
            std::chrono::steady_clock::time_point since{};
            bool stalled = false;
        } progress;
    };

    // `config` supplies the [server] values a device inherits; it must
    // outlive the registry (the engine's, which a reload replaces).
    DeviceRegistry(const ServerConfig& config, ModuleLoader& modules, const audiod_host& host,
                   const Announcer& announcer);

    // Opens and starts a device of module `type` ("auto": the sound card
    // where one is, else a null sink). The engine's own options (quantum,
    // rate, channels) are taken out of `options`; the rest go to the module.
    [[nodiscard]] std::variant<std::unique_ptr<Device>, std::string>
    open(const std::string& type, const std::string& name, OptionList options, DeviceKind kind);
    // Keeps an opened device, and announces it.
    Entry& add(std::unique_ptr<Device> device, std::string configured_type, OptionList options);
    // Forgets a device whose RT thread has stopped, and frees it.
    void remove(const Device& device);
    // Puts `fresh` in the entry's place (the same device reopened); returns
    // the old device, whose streams still point at it.
    std::unique_ptr<Device> replace(Entry& entry, std::unique_ptr<Device> fresh);
    void clear() { entries_.clear(); }

    // A reopened device, for its streams to land on (see reopen_failed).
    struct Reopened {
        Entry* entry;
        std::unique_ptr<Device> fresh;
    };
    // Tries to reopen every failed device whose turn it is (once a second).
    [[nodiscard]] std::vector<Reopened> reopen_failed(std::chrono::steady_clock::time_point now);

    // The device of that name and direction, or null.
    [[nodiscard]] Device* find(const std::string& name, DeviceKind kind) const;
    [[nodiscard]] Device* find_sink(const std::string& name) const {
        return find(name, DeviceKind::sink);
    }
    // What a record stream records from: a capture source by name, or the
    // sink whose monitor is named ("out.monitor"); the default sink's
    // monitor for "". Sets *wanted to the device's name.
    [[nodiscard]] Device* find_recordable(const std::string& name, std::string* wanted) const;
    [[nodiscard]] Entry* entry_of(const Device& device) const;
    // The entry of the device of that name, sink or source.
    [[nodiscard]] Entry* entry_named(const std::string& name) const;
    [[nodiscard]] Device* by_event_fd(int fd) const;

    // The default sink if it is working, else the first sink that is; null
    // if none is.
    [[nodiscard]] Device* default_sink() const;
    [[nodiscard]] const std::string& default_name() const noexcept { return default_; }
    // Makes `name` the default sink, announcing it; false if it already was.
    bool change_default(const std::string& name);
    // Sets the default sink at start, before anyone listens.
    void set_default(std::string name) { default_ = std::move(name); }
    // What a record stream that names no source records: the default
    // source chosen (a capture source, or a sink's monitor) while it is
    // there and working, else the default sink's monitor. Its name; "" if
    // no sink works.
    [[nodiscard]] std::string default_source() const;
    // The default source chosen ("": none), as set.
    [[nodiscard]] const std::string& chosen_source() const noexcept { return default_source_; }
    // Chooses `name` as the default source, announcing it; false if it
    // already was.
    bool change_default_source(const std::string& name);
    // Chooses the default source at start, before anyone listens.
    void set_default_source(std::string name) { default_source_ = std::move(name); }
    // Where the streams of a leaving device go: the default sink, else any
    // other working sink (a record stream records its monitor); or null.
    [[nodiscard]] Device* fallback_for(const Device& leaving) const;

    // The most frames of a stream at `rate` that one cycle of any device
    // takes.
    [[nodiscard]] uint64_t largest_cycle(uint32_t rate) const;
    [[nodiscard]] size_t count(DeviceKind kind) const;
    [[nodiscard]] size_t size() const noexcept { return entries_.size(); }
    [[nodiscard]] const std::vector<std::unique_ptr<Entry>>& entries() const noexcept {
        return entries_;
    }

private:
    // Sets a default (`chosen`) to `name`, announcing it as `kind`; false
    // if it already was.
    bool change(std::string& chosen, const std::string& name, const char* kind);

    const ServerConfig& config_;
    ModuleLoader& modules_;
    const audiod_host& host_;
    const Announcer& announcer_;
    std::vector<std::unique_ptr<Entry>> entries_;
    std::string default_;
    std::string default_source_;
};

// A failed device is reopened this often until it is back.
inline constexpr auto kReopenInterval = std::chrono::seconds(1);

} // namespace audiod
