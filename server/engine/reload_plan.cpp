#include "engine/reload_plan.h"

#include "engine/engine_options.h"

#include "audiod/audiod.h"

#include <algorithm>

namespace audiod {

namespace {

const DeviceConfig* find_config(const std::vector<DeviceConfig>& list, const std::string& name) {
    const auto it = std::find_if(list.begin(), list.end(),
                                 [&](const DeviceConfig& entry) { return entry.name == name; });
    return it == list.end() ? nullptr : &*it;
}

bool same_device_settings(const DeviceConfig& a, const DeviceConfig& b) {
    return a.type == b.type && a.options == b.options;
}

std::string where(const ServerConfig& config, const DeviceConfig& device) {
    return config.source + ":" + std::to_string(device.line);
}

} // namespace

std::variant<ReloadPlan, ClientError>
plan_reload(const ServerConfig& running, const ServerConfig& next, const ReloadContext& context) {
    // Values every device inherits: a change reopens them all.
    const bool inherited_changed = next.rate != running.rate || next.channels != running.channels ||
                                   next.quantum != running.quantum ||
                                   next.rt_priority != running.rt_priority;
    ReloadPlan plan;
    for (const DeviceKind kind : {DeviceKind::sink, DeviceKind::source}) {
        const bool source = kind == DeviceKind::source;
        const DeviceKind other = source ? DeviceKind::sink : DeviceKind::source;
        const auto& wanted = source ? next.sources : next.sinks;
        const auto& before = source ? running.sources : running.sinks;
        for (const DeviceConfig& device : wanted) {
            // Sinks and sources share one namespace.
            if (context.runs(device.name, other)) {
                return ClientError{AUDIOD_E_INVALID,
                                   where(next, device) + ": a " + device_kind_name(other) +
                                       " named '" + device.name + "' is running; unload it first"};
            }
            if (device.type != "auto") {
                if (const std::string error = context.type_error(device.type); !error.empty()) {
                    return ClientError{AUDIOD_E_INVALID, where(next, device) + ": " + error};
                }
            }
            if (source) {
                OptionList options = device.options;
                const auto relay = take_relay_request(options);
                if (const auto* error = std::get_if<std::string>(&relay)) {
                    return ClientError{AUDIOD_E_INVALID, where(next, device) + ": " + *error};
                }
                const std::string& sink = std::get<RelayRequest>(relay).sink;
                if (!sink.empty() && find_config(next.sinks, sink) == nullptr) {
                    return ClientError{AUDIOD_E_INVALID, where(next, device) + ": sink = \"" +
                                                             sink + "\": no sink has that name"};
                }
            }
            const DeviceConfig* was = find_config(before, device.name);
            if (!context.runs(device.name, kind)) {
                plan.opening.push_back({&device, kind});
            } else if (was == nullptr || !same_device_settings(*was, device) || inherited_changed) {
                // Loaded at run time under a name the file now uses, or changed.
                plan.reopening.push_back({&device, kind});
            }
        }
        for (const DeviceConfig& device : before) {
            if (find_config(wanted, device.name) == nullptr) {
                plan.closing.push_back({&device, kind});
            }
        }
    }
    // Sinks open first: sources may be relayed into them.
    std::stable_partition(
        plan.opening.begin(), plan.opening.end(),
        [](const ReloadPlan::Step& step) { return step.kind == DeviceKind::sink; });
    return plan;
}

} // namespace audiod
