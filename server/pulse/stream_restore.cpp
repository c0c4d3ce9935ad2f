#include "pulse/stream_restore.h"

#include "pulse/introspection.h"
#include "pulse/server_facts.h"

namespace audiod::pulse {

namespace {

constexpr std::string_view kByApplication = "sink-input-by-application-name:";

} // namespace

std::optional<std::string> app_of_entry(std::string_view name) {
    if (name.size() <= kByApplication.size() ||
        name.substr(0, kByApplication.size()) != kByApplication) {
        return std::nullopt;
    }
    return std::string(name.substr(kByApplication.size()));
}

std::string entry_of_app(std::string_view app) {
    return std::string(kByApplication) + std::string(app);
}

RestoreEntry restore_entry(const proto::AppInfo& app, uint32_t channels) {
    RestoreEntry entry;
    entry.name = entry_of_app(app.name);
    entry.map = standard_channel_map(channels);
    entry.volume = channel_volumes(app.volume, channels);
    if (!app.sink.empty()) {
        entry.device = app.sink;
    }
    entry.muted = app.muted;
    return entry;
}

void put_restore_entry(TagWriter& w, const RestoreEntry& entry) {
    w.put_string(entry.name);
    w.put_channel_map(entry.map);
    w.put_channel_volumes(entry.volume);
    w.put_optional_string(entry.device);
    w.put_bool(entry.muted);
}

bool get_restore_entry(TagReader& r, RestoreEntry& entry) {
    std::optional<std::string> name;
    if (!r.get_string(name) || !r.get_channel_map(entry.map) ||
        !r.get_channel_volumes(entry.volume) || !r.get_string(entry.device) ||
        !r.get_bool(entry.muted)) {
        return false;
    }
    if (!name || name->empty()) {
        return false;
    }
    entry.name = std::move(*name);
    return entry.volume.values.empty() || entry.volume.values.size() == entry.map.positions.size();
}

} // namespace audiod::pulse
