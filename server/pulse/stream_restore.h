// The stream-restore extension (EXTENSION "module-stream-restore"): how
// pavucontrol and desktop applets read and set what each application's
// streams start with. Its entries are named by kind; the kind audiod has
// is "sink-input-by-application-name:NAME", which is audiod's own
// per-application state (volume, mute, preferred sink: what `audioctl
// list apps` shows and `[apps.NAME]` sets). Entries of other kinds (by
// media role, by media name) are kept as written for as long as the server
// runs, so that a client reads back what it wrote, and do nothing else.
// Thread: any (pure).
#pragma once

#include "protocol/messages.h"
#include "pulse/tagstruct.h"

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace audiod::pulse {

inline constexpr std::string_view kStreamRestore = "module-stream-restore";
// The index it is known by (it is no module a client could unload).
inline constexpr uint32_t kStreamRestoreIndex = 0x7fff0000u;
// Entries of other kinds kept for each user (each shelf), at most.
inline constexpr size_t kMaxKeptRestoreEntries = 256;

enum class RestoreCommand : uint32_t {
    test = 0,
    read = 1,
    write = 2,
    remove = 3, // DELETE
    subscribe = 4,
    event = 5,
};

// WRITE's modes.
enum class RestoreMode : uint32_t { set = 0, merge = 1, replace = 2 };

struct RestoreEntry {
    std::string name;
    ChannelMap map;        // empty with `volume`: no volume
    ChannelVolumes volume; // empty: no volume
    std::optional<std::string> device;
    bool muted = false;
};

// The application an entry is about, or nullopt for another kind.
[[nodiscard]] std::optional<std::string> app_of_entry(std::string_view name);
[[nodiscard]] std::string entry_of_app(std::string_view app);

// An application's state as an entry, its volume on `channels`.
[[nodiscard]] RestoreEntry restore_entry(const proto::AppInfo& app, uint32_t channels);

void put_restore_entry(TagWriter& w, const RestoreEntry& entry);
// False if the fields are not an entry: a name empty or missing, a volume
// whose channel count is not its map's.
[[nodiscard]] bool get_restore_entry(TagReader& r, RestoreEntry& entry);

} // namespace audiod::pulse
