// `audiod --list-devices`: every device that a sink's or source's `device`
// option can name, as the modules that open them see them (each module's
// optional audiod_module_devices(), see audiod/module.h). Thread: control,
// before any sink runs.
#pragma once

#include "engine/module_loader.h"

#include <cstdint>
#include <string>
#include <vector>

namespace audiod {

struct ListedDevice {
    std::string module; // the `type` that opens it
    std::string api;
    std::string name;
    std::string description;
    int index = -1;
    bool playback = false;
    bool capture = false;
    uint32_t playback_channels = 0; // 0: unknown
    uint32_t capture_channels = 0;
    uint32_t default_rate = 0;
    double playback_latency_ms = 0;
    double capture_latency_ms = 0;
};

struct DeviceListing {
    std::vector<ListedDevice> devices;
    std::vector<std::string> errors;  // one line per module that could not list
    std::vector<std::string> skipped; // one line per file that is no module
};

// Loads every module in the loader's directory and asks those that can; a
// file there that fails to load as a module is skipped, and said so.
DeviceListing list_devices(ModuleLoader& modules);

// A table, one device per line; unknown values are "-".
std::string devices_table(const DeviceListing& listing);
// A JSON array of objects (unknown values are null).
std::string devices_json(const DeviceListing& listing);

} // namespace audiod
