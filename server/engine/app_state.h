// What audiod remembers about each application across restarts: its volume,
// its mute and the sink it was last moved to; plus the default sink chosen
// with `audioctl set-default-sink`. Keyed by the application name a client
// declares (else its executable's name).
//
// The state file is TOML, written atomically (temporary file in the same
// directory, fsync, rename, fsync of the directory), so a crash leaves the
// old file or the new one, never a mixture. A file that cannot be read back
// — corrupt, truncated, or from a future version — is renamed to
// PATH.corrupt and the server starts with defaults; it never refuses to run
// because of it. Thread: control.
#pragma once

#include "common/status.h"

#include <map>
#include <optional>
#include <string>

namespace audiod {

struct AppSettings {
    float volume = 1.0f;
    bool muted = false;
    std::string sink; // preferred sink, "" for the default

    [[nodiscard]] bool is_default() const noexcept {
        return volume == 1.0f && !muted && sink.empty();
    }
};

class AppStateStore {
public:
    // `path` "" keeps the state in memory only.
    explicit AppStateStore(std::string path)
        : path_(std::move(path)) {}

    // $XDG_STATE_HOME/audiod/state, else ~/.local/state/audiod/state.
    [[nodiscard]] static std::string default_path();

    // Reads the file. Succeeds if all is well (a missing file is fine),
    // else fails with a warning to log: the file was set aside and defaults
    // are in use.
    Status load();

    // Writes the file if anything changed since the last save; fails with
    // the reason (the state stays dirty and is retried).
    Status save_if_dirty();

    [[nodiscard]] AppSettings get(const std::string& app) const;
    void set(const std::string& app, const AppSettings& settings);
    [[nodiscard]] const std::map<std::string, AppSettings>& all() const noexcept { return apps_; }

    [[nodiscard]] const std::string& default_sink() const noexcept { return default_sink_; }
    void set_default_sink(const std::string& sink);

    [[nodiscard]] const std::string& path() const noexcept { return path_; }
    [[nodiscard]] bool dirty() const noexcept { return dirty_; }

    // The file's text for the current state (public for tests).
    [[nodiscard]] std::string serialize() const;
    // Parses a state file's text; nullopt with *error set if it is not valid.
    static std::optional<AppStateStore> parse(const std::string& text, std::string* error);

private:
    std::string path_;
    std::map<std::string, AppSettings> apps_;
    std::string default_sink_;
    bool dirty_ = false;
};

} // namespace audiod
