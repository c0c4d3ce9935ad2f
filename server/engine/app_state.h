// What audiod remembers about each application across restarts: its volume,
// its mute and the sink it was last moved to, once changed at run time; when
// it last played; plus the default sink chosen with `audioctl
// set-default-sink`. Keyed by the application name a client declares (else
// its executable's name).
//
// An application's settings come from, in order: what was changed at run
// time (kept until forget()), the configuration's [apps.NAME] rule (which
// also applies to a system-wide server's per-user name UID/NAME), the
// defaults. Settings may be changed for an application that has never
// played; they apply from its first frame.
//
// The state file is TOML, written atomically (temporary file in the same
// directory, fsync, rename, fsync of the directory), so a crash leaves the
// old file or the new one, never a mixture. A file that cannot be read back
// — corrupt, truncated, or from a future version — is renamed to
// PATH.corrupt and the server starts with defaults; it never refuses to run
// because of it. The server writes it off the control thread (see
// state_file_writer.h). Thread: control.
#pragma once

#include "common/status.h"

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace audiod {

struct AppSettings {
    float volume = 1.0f;
    bool muted = false;
    std::string sink; // preferred sink, "" for the default

    [[nodiscard]] bool is_default() const noexcept {
        return volume == 1.0f && !muted && sink.empty();
    }
};

// A system-wide server's state file (audiod --system).
inline constexpr const char* kSystemStatePath = "/var/lib/audiod/state";

class AppStateStore {
public:
    // At most this many applications are remembered: a client can declare any
    // name, and the file must not grow without bound. When full, the one
    // seen longest ago without run-time settings makes room for a new one.
    static constexpr size_t kMaxApps = 1000;

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
    // the reason (the state stays dirty and is retried). This waits for the
    // disk: the server writes through a StateFileWriter instead.
    Status save_if_dirty();
    // The file's text if anything changed since it was last taken (nullopt
    // if not, or if the state is kept in memory only); the state counts as
    // saved from then on: the caller writes it.
    [[nodiscard]] std::optional<std::string> take_text();
    // A write of taken text failed: it is taken again next time.
    void mark_dirty() noexcept { dirty_ = true; }

    // The configuration's [apps.NAME] rules (replacing earlier ones).
    void set_rules(std::map<std::string, AppSettings> rules);

    // The settings in force for `app` (see above).
    [[nodiscard]] AppSettings get(const std::string& app) const;
    // Remembers settings changed at run time; they win over a rule until
    // forget(). Fails when kMaxApps applications all have settings.
    Status set(const std::string& app, const AppSettings& settings);
    // Drops what was remembered of `app` (settings and when it played); a
    // rule for it applies again. False if nothing was remembered.
    bool forget(const std::string& app);
    // Notes that `app` plays now (`unix_seconds`): a new application is saved
    // at once, a known one's time with the next save.
    void mark_seen(const std::string& app, int64_t unix_seconds);
    // mark_seen at the system clock's now.
    void mark_seen_now(const std::string& app);

    // When `app` last played (Unix seconds), 0 if never.
    [[nodiscard]] int64_t last_seen(const std::string& app) const;
    // Whether a rule applies to `app` (the rule for NAME applies to a
    // system-wide server's UID/NAME too).
    [[nodiscard]] bool has_rule(const std::string& app) const;
    // Whether settings changed at run time are remembered for `app`.
    [[nodiscard]] bool remembered(const std::string& app) const;
    // Every application remembered or with a rule, sorted.
    [[nodiscard]] std::vector<std::string> names() const;

    [[nodiscard]] const std::string& default_sink() const noexcept { return default_sink_; }
    void set_default_sink(const std::string& sink);
    // "" while none was chosen (the default sink's monitor is recorded).
    [[nodiscard]] const std::string& default_source() const noexcept { return default_source_; }
    void set_default_source(const std::string& source);

    [[nodiscard]] const std::string& path() const noexcept { return path_; }
    [[nodiscard]] bool dirty() const noexcept { return dirty_; }
    // take_text(), with the play times noted since the last save too (at a
    // clean stop).
    [[nodiscard]] std::optional<std::string> take_all_text();

    // The file's text for the current state (public for tests).
    [[nodiscard]] std::string serialize() const;
    // Parses a state file's text; nullopt with *error set if it is not valid.
    static std::optional<AppStateStore> parse(const std::string& text, std::string* error);

private:
    struct Record {
        std::optional<AppSettings> chosen; // changed at run time
        int64_t last_seen = 0;             // Unix seconds, 0 never played
    };
    // Makes room for one more record if full; false if it cannot.
    bool make_room();

    std::string path_;
    std::map<std::string, Record> apps_;
    std::map<std::string, AppSettings> rules_;
    std::string default_sink_;
    std::string default_source_;
    bool dirty_ = false;
    bool seen_changed_ = false; // play times newer than the file
};

} // namespace audiod
