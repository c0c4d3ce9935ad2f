#include "engine/device_registry.h"

#include "config/config_keys.h"

#include "audiod/audiod.h"
#include "log.h"

#include <algorithm>
#include <dirent.h>

namespace audiod {

namespace {

// A sound card is present when ALSA has a playback PCM device node.
bool sound_card_present() {
    DIR* dir = ::opendir("/dev/snd");
    if (dir == nullptr) {
        return false;
    }
    bool found = false;
    while (const dirent* entry = ::readdir(dir)) {
        const std::string name = entry->d_name;
        if (name.rfind("pcmC", 0) == 0 && name.back() == 'p') {
            found = true;
            break;
        }
    }
    ::closedir(dir);
    return found;
}

} // namespace

DeviceRegistry::DeviceRegistry(const ServerConfig& config, ModuleLoader& modules,
                               const audiod_host& host, const Announcer& announcer)
    : config_(config)
    , modules_(modules)
    , host_(host)
    , announcer_(announcer) {}

std::variant<std::unique_ptr<Device>, std::string>
DeviceRegistry::open(const std::string& configured_type, const std::string& name,
                     OptionList options, DeviceKind kind) {
    std::string type = configured_type;
    if (type == "auto") {
        // ALSA's default device where a sound card exists and the alsa module
        // is installed; otherwise a null sink keeps everything working.
        type = "null";
        if (sound_card_present()) {
            if (std::holds_alternative<const audiod_module*>(modules_.load("alsa"))) {
                type = "alsa";
                options.emplace_back("device", "default");
            } else {
                log_warning("engine", "a sound card exists but the alsa module is not installed; "
                                      "using a null sink");
            }
        }
        log_info("engine", std::string(device_kind_name(kind)) + " " + name +
                               ": type auto resolved to " + type);
    }
    // Every device may have its own quantum, rate and channel count.
    const auto take = [&](std::string_view key, uint32_t fallback) {
        const ConfigKey& spec = config_key("sinks.NAME", key);
        return take_uint_option(options, std::string(key), fallback,
                                static_cast<uint32_t>(spec.min), static_cast<uint32_t>(spec.max));
    };
    const auto quantum = take("quantum", config_.quantum);
    const auto rate = take("rate", config_.rate);
    const auto channels = take("channels", config_.channels);
    for (const auto* taken : {&quantum, &rate, &channels}) {
        if (const auto* error = std::get_if<std::string>(taken)) {
            return *error;
        }
    }
    const auto loaded = modules_.load(type);
    if (const auto* error = std::get_if<std::string>(&loaded)) {
        return *error;
    }
    DeviceRequest request;
    request.name = name;
    request.type = type;
    request.format = {std::get<uint32_t>(rate), std::get<uint32_t>(channels),
                      std::get<uint32_t>(quantum)};
    request.options = std::move(options);
    request.rt_priority = config_.rt_priority;
    request.kind = kind;
    auto opened = Device::open(*std::get<const audiod_module*>(loaded), host_, std::move(request));
    if (auto* error = std::get_if<std::string>(&opened)) {
        return *error;
    }
    auto& device = std::get<std::unique_ptr<Device>>(opened);
    if (const Status started = device->start(); !started.ok()) {
        return started.reason();
    }
    log_info("engine", std::string(device_kind_name(kind)) + " started name=" + name + " type=" +
                           type + " quantum=" + std::to_string(device->format().quantum) +
                           " scheduling=\"" + device->scheduling() + "\"");
    return std::move(device);
}

DeviceRegistry::Entry& DeviceRegistry::add(std::unique_ptr<Device> device,
                                           std::string configured_type, OptionList options) {
    auto entry = std::make_unique<Entry>();
    entry->device = std::move(device);
    entry->configured_type = std::move(configured_type);
    entry->options = std::move(options);
    // The watchdog counts a device's silence from when it arrived.
    entry->progress.since = std::chrono::steady_clock::now();
    Entry& added = *entries_.emplace_back(std::move(entry));
    announcer_.device_opened(*added.device);
    proto::Event event;
    event.kind = added.device->is_source() ? "source-added" : "sink-added";
    event.device = added.device->name();
    announcer_.event(event);
    return added;
}

void DeviceRegistry::remove(const Device& device) {
    std::erase_if(entries_, [&](const auto& entry) { return entry->device.get() == &device; });
}

std::unique_ptr<Device> DeviceRegistry::replace(Entry& entry, std::unique_ptr<Device> fresh) {
    std::unique_ptr<Device> old = std::move(entry.device);
    entry.device = std::move(fresh);
    // What was learnt of the old device goes; its configuration and gain
    // stay. Its silence counts from now: a fresh device that had not yet
    // completed its first cycle at the watchdog's next look was found
    // stalled at once (its silence counted from the clock's epoch), and
    // given up if its RT thread was waiting in its module.
    entry.failure_announced = false;
    entry.progress = {0, std::chrono::steady_clock::now(), false};
    return old;
}

std::vector<DeviceRegistry::Reopened>
DeviceRegistry::reopen_failed(std::chrono::steady_clock::time_point now) {
    std::vector<Reopened> reopened;
    for (const auto& entry : entries_) {
        Device& device = *entry->device;
        if (!device.failed() || !entry->failure_announced || entry->suspended ||
            now < entry->next_reopen) {
            continue;
        }
        if (device.abandoned()) {
            if (!device.rt_ended()) {
                continue; // reopened once its stuck call returns, not beside it
            }
            device.release();
        }
        entry->next_reopen = now + kReopenInterval;
        auto opened = open(entry->configured_type, device.name(), entry->options, device.kind());
        if (auto* error = std::get_if<std::string>(&opened)) {
            log_debug("engine", std::string(device_kind_name(device.kind())) + " " + device.name() +
                                    " still unavailable: " + *error);
            continue;
        }
        reopened.push_back({entry.get(), std::move(std::get<std::unique_ptr<Device>>(opened))});
    }
    return reopened;
}

Device* DeviceRegistry::find(const std::string& name, DeviceKind kind) const {
    for (const auto& entry : entries_) {
        if (entry->device->name() == name && entry->device->kind() == kind) {
            return entry->device.get();
        }
    }
    return nullptr;
}

Device* DeviceRegistry::find_recordable(const std::string& name, std::string* wanted) const {
    *wanted = name;
    if (Device* capture = find(name, DeviceKind::source)) {
        return capture;
    }
    if (name.empty()) {
        // The default, not a name: *wanted stays "", so the stream follows
        // whatever the default becomes.
        const std::string chosen = default_source();
        std::string named;
        return chosen.empty() ? nullptr : find_recordable(chosen, &named);
    }
    *wanted = monitored_sink(name);
    return wanted->empty() ? nullptr : find_sink(*wanted);
}

DeviceRegistry::Entry* DeviceRegistry::entry_of(const Device& device) const {
    for (const auto& entry : entries_) {
        if (entry->device.get() == &device) {
            return entry.get();
        }
    }
    return nullptr;
}

DeviceRegistry::Entry* DeviceRegistry::entry_named(const std::string& name) const {
    for (const auto& entry : entries_) {
        if (entry->device->name() == name) {
            return entry.get();
        }
    }
    return nullptr;
}

Device* DeviceRegistry::by_event_fd(int fd) const {
    Device* found = nullptr;
    for (const auto& entry : entries_) {
        if (entry->device->event_fd() == fd) {
            found = entry->device.get();
        }
    }
    return found;
}

Device* DeviceRegistry::default_sink() const {
    Device* chosen = find_sink(default_);
    if (chosen != nullptr && !chosen->failed()) {
        return chosen;
    }
    for (const auto& entry : entries_) {
        if (!entry->device->failed() && !entry->device->is_source()) {
            return entry->device.get();
        }
    }
    return nullptr;
}

std::string DeviceRegistry::default_source() const {
    if (!default_source_.empty()) {
        std::string recorded;
        const Device* chosen = find_recordable(default_source_, &recorded);
        if (chosen != nullptr && !chosen->failed()) {
            return default_source_;
        }
    }
    const Device* sink = default_sink();
    return sink != nullptr ? sink->name() + std::string(kMonitorSuffix) : "";
}

bool DeviceRegistry::change_default_source(const std::string& name) {
    return change(default_source_, name, "default-source-changed");
}

bool DeviceRegistry::change_default(const std::string& name) {
    return change(default_, name, "default-changed");
}

bool DeviceRegistry::change(std::string& chosen, const std::string& name, const char* kind) {
    if (chosen == name) {
        return false;
    }
    proto::Event event;
    event.kind = kind;
    event.device = name;
    event.previous_device = chosen;
    chosen = name;
    announcer_.event(event);
    return true;
}

Device* DeviceRegistry::fallback_for(const Device& leaving) const {
    Device* preferred = default_sink();
    if (preferred != nullptr && preferred != &leaving) {
        return preferred;
    }
    for (const auto& entry : entries_) {
        if (entry->device.get() != &leaving && !entry->device->failed() &&
            !entry->device->is_source()) {
            return entry->device.get();
        }
    }
    return nullptr;
}

uint64_t DeviceRegistry::largest_cycle(uint32_t rate) const {
    uint64_t largest = 0;
    for (const auto& entry : entries_) {
        const DeviceFormat& f = entry->device->format();
        largest = std::max<uint64_t>(largest, (uint64_t{f.quantum} * rate + f.rate - 1) / f.rate);
    }
    return largest;
}

size_t DeviceRegistry::count(DeviceKind kind) const {
    return static_cast<size_t>(std::count_if(entries_.begin(), entries_.end(), [&](const auto& e) {
        return e->device->kind() == kind;
    }));
}

} // namespace audiod
