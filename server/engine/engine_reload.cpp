// Engine: reloading the configuration while streams play (SIGHUP, `audioctl
// reload`). The new configuration is compared with the running one by sink
// and source name: new ones are opened, removed ones closed (their streams
// rescued as when a sink is unloaded), changed ones reopened with their
// streams carried over. A configuration that cannot work is refused before
// anything changes: every error that can be found without opening a device
// (syntax, unknown keys, sink types without a module, a source playing into
// a sink that will not exist) leaves the running configuration as it was.
// A device that fails to open with its new settings keeps its old ones, or,
// if those fail too, is retried every second like an unplugged device.
#include "engine/engine.h"

#include "log.h"

#include <algorithm>
#include <utility>

namespace audiod {

namespace {

const SinkConfig* find_config(const std::vector<SinkConfig>& list, const std::string& name) {
    const auto it = std::find_if(list.begin(), list.end(),
                                 [&](const SinkConfig& entry) { return entry.name == name; });
    return it == list.end() ? nullptr : &*it;
}

bool same_device_settings(const SinkConfig& a, const SinkConfig& b) {
    return a.type == b.type && a.options == b.options;
}

std::string where(const ServerConfig& config, const SinkConfig& device) {
    return config.source + ":" + std::to_string(device.line);
}

} // namespace

const Device* Engine::running_device(const std::string& name, bool source) const {
    for (const DeviceEntry& entry : devices_) {
        if (entry.device->name() == name && entry.device->is_source() == source) {
            return entry.device.get();
        }
    }
    return nullptr;
}

std::variant<std::string, ClientError> Engine::reload(ServerConfig next) {
    // Values every device inherits: a change reopens them all.
    const bool inherited_changed = next.rate != config_.rate || next.channels != config_.channels ||
                                   next.quantum != config_.quantum ||
                                   next.rt_priority != config_.rt_priority;
    struct Step {
        const SinkConfig* device;
        bool source;
    };
    std::vector<Step> opening;   // not running: open
    std::vector<Step> reopening; // running with other settings: reopen
    std::vector<Step> closing;   // configured before, gone now: close
    for (const bool source : {false, true}) {
        const auto& wanted = source ? next.sources : next.sinks;
        const auto& running = source ? config_.sources : config_.sinks;
        for (const SinkConfig& device : wanted) {
            // Sinks and sources share one namespace.
            if (running_device(device.name, !source) != nullptr) {
                return ClientError{AUDIOD_E_INVALID,
                                   where(next, device) + ": a " + (source ? "sink" : "source") +
                                       " named '" + device.name + "' is running; unload it first"};
            }
            if (device.type != "auto") {
                if (const auto loaded = modules_.load(device.type);
                    const auto* error = std::get_if<std::string>(&loaded)) {
                    return ClientError{AUDIOD_E_INVALID, where(next, device) + ": " + *error};
                }
            }
            if (source) {
                auto options = device.options;
                const auto play = take_play_request(options);
                if (const auto* error = std::get_if<std::string>(&play)) {
                    return ClientError{AUDIOD_E_INVALID, where(next, device) + ": " + *error};
                }
                const std::string& sink = std::get<PlayRequest>(play).sink;
                if (!sink.empty() && find_config(next.sinks, sink) == nullptr) {
                    return ClientError{AUDIOD_E_INVALID, where(next, device) + ": sink = \"" +
                                                             sink + "\": no sink has that name"};
                }
            }
            const SinkConfig* before = find_config(running, device.name);
            const bool runs = running_device(device.name, source) != nullptr;
            if (!runs) {
                opening.push_back({&device, source});
            } else if (before == nullptr || !same_device_settings(*before, device) ||
                       inherited_changed) {
                // Loaded at run time under a name the file now uses, or changed.
                reopening.push_back({&device, source});
            }
        }
        for (const SinkConfig& device : running) {
            if (find_config(wanted, device.name) == nullptr) {
                closing.push_back({&device, source});
            }
        }
    }

    // From here on the configuration is the new one; what fails now is a
    // device, not the file, and is reported while the rest goes on.
    // `previous` keeps the entries `closing` points to; moving the vectors
    // keeps every element where it is.
    const ServerConfig previous = std::exchange(config_, std::move(next));
    take_app_rules();
    for (auto& [id, stream] : streams_) {
        if (!stream->detaching) {
            apply_gain(*stream);
        }
    }

    std::vector<std::string> done;
    std::vector<std::string> errors;
    const auto note = [&](const char* what, const Step& step) {
        done.push_back(std::string(what) + " " + (step.source ? "source " : "sink ") +
                       step.device->name);
    };
    for (const bool source : {false, true}) { // sinks first: sources may play into them
        for (const Step& step : opening) {
            if (step.source != source) {
                continue;
            }
            if (MaybeError error = load_sink(step.device->type, step.device->name,
                                             step.device->options, step.source)) {
                errors.push_back(where(config_, *step.device) + ": " + error->message);
            } else {
                note("opened", step);
            }
        }
    }
    for (const Step& step : reopening) {
        if (const Status reopened = reopen_device(*step.device, step.source); !reopened.ok()) {
            errors.push_back(where(config_, *step.device) + ": " + reopened.reason());
        } else {
            note("reopened", step);
        }
    }
    // The configured default, unless one chosen at run time is here.
    const std::string chosen = state_.default_sink();
    std::string wanted_default = config_.default_sink;
    if (!chosen.empty() && find_sink(chosen) != nullptr) {
        wanted_default = chosen;
    }
    if (find_sink(wanted_default) != nullptr && change_default_sink(wanted_default)) {
        done.push_back("default sink " + wanted_default);
    }

    // Closed last, so that their streams go to the new default sink.
    for (const Step& step : closing) {
        if (MaybeError error = unload_sink(step.device->name, step.source)) {
            errors.push_back(error->message);
        } else {
            note("closed", step);
        }
    }
    std::string summary = "reloaded " + config_.source;
    summary += done.empty() ? ": no sink or source changed" : ": ";
    for (size_t i = 0; i < done.size(); ++i) {
        summary += (i == 0 ? "" : ", ") + done[i];
    }
    for (const std::string& error : errors) {
        summary += "\nerror: " + error;
    }
    (errors.empty() ? log_info : log_warning)("engine", summary);
    return summary;
}

Status Engine::reopen_device(const SinkConfig& device, bool source) {
    if (source) {
        // A source's recordings are rescued to the default sink's monitor
        // and brought back when it is open again, as for a source unloaded
        // and loaded by hand; its player starts afresh.
        if (MaybeError error = unload_sink(device.name, true)) {
            return Status::failure(error->message);
        }
        if (MaybeError error = load_sink(device.type, device.name, device.options, true)) {
            return Status::failure(error->message);
        }
        return Status::success();
    }
    const auto entry = std::find_if(devices_.begin(), devices_.end(), [&](const DeviceEntry& e) {
        return e.device->name() == device.name && !e.device->is_source();
    });
    if (entry == devices_.end()) {
        return Status::failure("sink '" + device.name + "' is not running");
    }
    // In place, so that a sink that is the only one keeps its streams: the
    // old device is closed first (a sound card opens once), the new one
    // opened, and the streams land on it where they were.
    entry->device->release();
    auto opened = open_sink(device.type, device.name, device.options);
    if (auto* error = std::get_if<std::string>(&opened)) {
        const std::string reason = *error;
        auto restored = open_sink(entry->configured_type, device.name, entry->options);
        if (std::holds_alternative<std::unique_ptr<Device>>(restored)) {
            swap_device(*entry, std::move(std::get<std::unique_ptr<Device>>(restored)));
            return Status::failure("cannot open sink '" + device.name +
                                   "' with its new settings (" + reason +
                                   "); it keeps its old ones");
        }
        // Neither opens: it is a failed sink, retried with the new settings.
        entry->configured_type = device.type;
        entry->options = device.options;
        entry->next_reopen = std::chrono::steady_clock::now() + kReopenInterval;
        entry->device->mark_failed();
        announce_failure(*entry->device);
        return Status::failure("cannot open sink '" + device.name + "' (" + reason +
                               "); retrying every second");
    }
    entry->configured_type = device.type;
    entry->options = device.options;
    swap_device(*entry, std::move(std::get<std::unique_ptr<Device>>(opened)));
    return Status::success();
}

} // namespace audiod
