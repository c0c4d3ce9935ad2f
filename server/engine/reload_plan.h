// What a reload of the configuration does (SIGHUP, `audioctl reload`),
// worked out before anything changes: the new configuration is compared
// with the running one by device name, and every error that can be found
// without opening a device (a sink and a source of one name, a type with
// no module, a source relayed into a sink that will not exist) refuses the
// whole reload. A pure function of its inputs, so that it is tested alone;
// the engine carries the plan out (Engine::reload).
#pragma once

#include "config/config.h"
#include "device/device.h"
#include "engine/client_error.h"

#include <functional>
#include <string>
#include <variant>
#include <vector>

namespace audiod {

struct ReloadPlan {
    struct Step {
        const DeviceConfig* device; // in the configuration it comes from
        DeviceKind kind;
    };
    std::vector<Step> opening;   // configured now, not running: open (sinks first)
    std::vector<Step> reopening; // running with other settings: reopen in place
    std::vector<Step> closing;   // running, configured before, gone now: close (last)
};

struct ReloadContext {
    // Whether a device of that name and direction runs now.
    std::function<bool(const std::string& name, DeviceKind kind)> runs;
    // Why a module type cannot be loaded, or "".
    std::function<std::string(const std::string& type)> type_error;
};

// The plan from `running` to `next`. `closing` steps point into `running`,
// the others into `next`: both must outlive the plan.
[[nodiscard]] std::variant<ReloadPlan, ClientError>
plan_reload(const ServerConfig& running, const ServerConfig& next, const ReloadContext& context);

} // namespace audiod
