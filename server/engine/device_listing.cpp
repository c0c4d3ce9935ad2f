#include "engine/device_listing.h"

#include "common/json_writer.h"

#include <algorithm>
#include <cstdio>
#include <variant>

namespace audiod {

namespace {

struct Collector {
    std::string module;
    std::vector<ListedDevice>* devices;
};

std::string text_or_empty(const char* text) {
    return text != nullptr ? text : "";
}

// Called by a module (through the C ABI): nothing may be thrown back
// through it, so a device that cannot be stored is dropped.
void collect(void* context, const audiod_device_info* info) noexcept try {
    auto& collector = *static_cast<Collector*>(context);
    if (info == nullptr || info->name == nullptr) {
        return;
    }
    ListedDevice device;
    device.module = collector.module;
    device.api = text_or_empty(info->api);
    device.name = info->name;
    device.description = text_or_empty(info->description);
    device.index = info->index;
    device.playback = info->playback != 0;
    device.capture = info->capture != 0;
    device.playback_channels = info->playback_channels;
    device.capture_channels = info->capture_channels;
    device.default_rate = info->default_rate;
    device.playback_latency_ms = info->playback_latency_ms;
    device.capture_latency_ms = info->capture_latency_ms;
    collector.devices->push_back(std::move(device));
} catch (...) {
}

// A direction's cell: its channels if known, "yes" if it goes that way, "-".
std::string direction_cell(bool capable, uint32_t channels) {
    if (!capable) {
        return "-";
    }
    return channels > 0 ? std::to_string(channels) : "yes";
}

std::string latency_text(double ms) {
    if (ms <= 0) {
        return "-";
    }
    char text[32];
    std::snprintf(text, sizeof text, "%.1f", ms);
    return text;
}

} // namespace

DeviceListing list_devices(ModuleLoader& modules) {
    DeviceListing listing;
    for (const std::string& type : modules.available_types()) {
        const auto loaded = modules.load(type);
        if (const auto* why = std::get_if<std::string>(&loaded)) {
            listing.skipped.push_back(*why);
            continue;
        }
        const audiod_module_devices_fn list = modules.devices_function(type);
        if (list == nullptr) {
            continue;
        }
        Collector collector{type, &listing.devices};
        char error[512] = {};
        if (list(collect, &collector, error, sizeof error) < 0) {
            listing.errors.push_back(type + ": " +
                                     (error[0] != '\0' ? error : "cannot list its devices"));
        }
    }
    return listing;
}

std::string devices_table(const DeviceListing& listing) {
    std::vector<std::vector<std::string>> rows = {
        {"MODULE", "API", "INDEX", "NAME", "PLAY", "REC", "RATE", "LATENCY-MS", "DESCRIPTION"}};
    for (const ListedDevice& d : listing.devices) {
        const bool any_latency = d.playback_latency_ms > 0 || d.capture_latency_ms > 0;
        rows.push_back({d.module, d.api, d.index >= 0 ? std::to_string(d.index) : "-", d.name,
                        direction_cell(d.playback, d.playback_channels),
                        direction_cell(d.capture, d.capture_channels),
                        d.default_rate > 0 ? std::to_string(d.default_rate) : "-",
                        any_latency ? latency_text(d.playback_latency_ms) + "/" +
                                          latency_text(d.capture_latency_ms)
                                    : "-",
                        d.description});
    }
    std::vector<size_t> widths(rows.front().size(), 0);
    for (const auto& row : rows) {
        for (size_t i = 0; i < row.size(); ++i) {
            widths[i] = std::max(widths[i], row[i].size());
        }
    }
    std::string out;
    for (const auto& row : rows) {
        std::string line;
        for (size_t i = 0; i < row.size(); ++i) {
            line += row[i];
            if (i + 1 < row.size()) {
                line += std::string(widths[i] - row[i].size() + 2, ' ');
            }
        }
        while (!line.empty() && line.back() == ' ') {
            line.pop_back();
        }
        out += line + "\n";
    }
    return out;
}

std::string devices_json(const DeviceListing& listing) {
    JsonWriter json;
    json.begin_array();
    for (const ListedDevice& d : listing.devices) {
        json.begin_object();
        json.key("module");
        json.value(d.module);
        json.key("api");
        json.value(d.api);
        json.key("index");
        d.index >= 0 ? json.value(d.index) : json.null();
        json.key("name");
        json.value(d.name);
        json.key("description");
        json.value(d.description);
        json.key("playback");
        json.value(d.playback);
        json.key("capture");
        json.value(d.capture);
        json.key("playback_channels");
        d.playback_channels > 0 ? json.value(d.playback_channels) : json.null();
        json.key("capture_channels");
        d.capture_channels > 0 ? json.value(d.capture_channels) : json.null();
        json.key("default_rate");
        d.default_rate > 0 ? json.value(d.default_rate) : json.null();
        json.key("playback_latency_ms");
        d.playback_latency_ms > 0 ? json.value(d.playback_latency_ms) : json.null();
        json.key("capture_latency_ms");
        d.capture_latency_ms > 0 ? json.value(d.capture_latency_ms) : json.null();
        json.end_object();
    }
    json.end_array();
    return json.str() + "\n";
}

} // namespace audiod
