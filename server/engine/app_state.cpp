#include "engine/app_state.h"

#include "engine/app_name.h"
#include "os/atomic_file.h"

#include "config/toml_guard.h"
#include "config/toml_parser.h"
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>

namespace audiod {

namespace {

constexpr int64_t kStateVersion = 1;

// A TOML basic string. Names reaching here are valid UTF-8 without control
// characters (the control server sanitises them), but escape defensively.
std::string quoted(const std::string& text) {
    std::string out = "\"";
    for (const char c : text) {
        if (c == '"' || c == '\\') {
            out += '\\';
            out += c;
        } else if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) {
            char escape[8];
            std::snprintf(escape, sizeof escape, "\\u%04x", static_cast<unsigned char>(c));
            out += escape;
        } else {
            out += c;
        }
    }
    return out + "\"";
}

} // namespace

std::string AppStateStore::default_path() {
    if (const char* state = std::getenv("XDG_STATE_HOME"); state != nullptr && *state != '\0') {
        return std::string(state) + "/audiod/state";
    }
    if (const char* home = std::getenv("HOME"); home != nullptr && *home != '\0') {
        return std::string(home) + "/.local/state/audiod/state";
    }
    return {};
}

void AppStateStore::set_rules(std::map<std::string, AppSettings> rules) {
    rules_ = std::move(rules);
}

AppSettings AppStateStore::get(const std::string& app) const {
    if (const auto it = apps_.find(app); it != apps_.end() && it->second.chosen) {
        return *it->second.chosen;
    }
    const auto rule = rules_.find(std::string(bare_app_name(app)));
    return rule == rules_.end() ? AppSettings{} : rule->second;
}

bool AppStateStore::make_room() {
    if (apps_.size() < kMaxApps) {
        return true;
    }
    auto oldest = apps_.end();
    for (auto it = apps_.begin(); it != apps_.end(); ++it) {
        if (!it->second.chosen &&
            (oldest == apps_.end() || it->second.last_seen < oldest->second.last_seen)) {
            oldest = it;
        }
    }
    if (oldest == apps_.end()) {
        return false;
    }
    apps_.erase(oldest);
    dirty_ = true;
    return true;
}

Status AppStateStore::set(const std::string& app, const AppSettings& settings) {
    auto it = apps_.find(app);
    if (it == apps_.end()) {
        if (!make_room()) {
            return Status::failure("too many applications have settings (" +
                                   std::to_string(kMaxApps) +
                                   "); forget some with audioctl forget app:NAME");
        }
        it = apps_.emplace(app, Record{}).first;
    }
    std::optional<AppSettings>& chosen = it->second.chosen;
    if (!chosen || chosen->volume != settings.volume || chosen->muted != settings.muted ||
        chosen->sink != settings.sink) {
        chosen = settings;
        dirty_ = true;
    }
    return Status::success();
}

bool AppStateStore::forget(const std::string& app) {
    if (apps_.erase(app) == 0) {
        return false;
    }
    dirty_ = true;
    return true;
}

void AppStateStore::mark_seen_now(const std::string& app) {
    mark_seen(app, std::chrono::duration_cast<std::chrono::seconds>(
                       std::chrono::system_clock::now().time_since_epoch())
                       .count());
}

void AppStateStore::mark_seen(const std::string& app, int64_t unix_seconds) {
    auto it = apps_.find(app);
    if (it == apps_.end()) {
        if (!make_room()) {
            return; // every slot holds settings: not worth losing one for a time
        }
        it = apps_.emplace(app, Record{}).first;
        dirty_ = true;
    }
    if (it->second.last_seen != unix_seconds) {
        it->second.last_seen = unix_seconds;
        seen_changed_ = true;
    }
}

int64_t AppStateStore::last_seen(const std::string& app) const {
    const auto it = apps_.find(app);
    return it == apps_.end() ? 0 : it->second.last_seen;
}

bool AppStateStore::has_rule(const std::string& app) const {
    return rules_.count(std::string(bare_app_name(app))) != 0;
}

bool AppStateStore::remembered(const std::string& app) const {
    const auto it = apps_.find(app);
    return it != apps_.end() && it->second.chosen.has_value();
}

std::vector<std::string> AppStateStore::names() const {
    std::vector<std::string> out;
    for (const auto& [name, record] : apps_) {
        out.push_back(name);
    }
    for (const auto& [name, rule] : rules_) {
        if (apps_.count(name) == 0) {
            out.push_back(name);
        }
    }
    std::sort(out.begin(), out.end());
    return out;
}

void AppStateStore::set_default_sink(const std::string& sink) {
    if (sink != default_sink_) {
        default_sink_ = sink;
        dirty_ = true;
    }
}

void AppStateStore::set_default_source(const std::string& source) {
    if (source != default_source_) {
        default_source_ = source;
        dirty_ = true;
    }
}

std::string AppStateStore::serialize() const {
    std::ostringstream out;
    out << "# audiod per-application state, written by audiod; safe to delete.\n";
    out << "version = " << kStateVersion << "\n";
    // The count lets a reader notice a file cut short between two tables.
    out << "apps-count = " << apps_.size() << "\n";
    if (!default_sink_.empty()) {
        out << "default-sink = " << quoted(default_sink_) << "\n";
    }
    if (!default_source_.empty()) {
        out << "default-source = " << quoted(default_source_) << "\n";
    }
    for (const auto& [app, record] : apps_) {
        out << "\n[apps." << quoted(app) << "]\n";
        if (record.last_seen != 0) {
            out << "last-seen = " << record.last_seen << "\n";
        }
        if (!record.chosen) {
            continue; // only seen: its settings come from a rule or the defaults
        }
        const AppSettings& settings = *record.chosen;
        char volume[32];
        std::snprintf(volume, sizeof volume, "%.9g", static_cast<double>(settings.volume));
        out << "volume = " << volume << (std::strpbrk(volume, ".e") ? "" : ".0") << "\n";
        out << "muted = " << (settings.muted ? "true" : "false") << "\n";
        if (!settings.sink.empty()) {
            out << "sink = " << quoted(settings.sink) << "\n";
        }
    }
    return out.str();
}

std::optional<AppStateStore> AppStateStore::parse(const std::string& text, std::string* error) {
    AppStateStore store("");
    if (const auto unsafe = check_toml_text(text)) {
        *error = "line " + std::to_string(unsafe->line) + ": " + unsafe->reason;
        return std::nullopt;
    }
    toml::table root;
    try {
        root = toml::parse(text, std::string_view("state"));
    } catch (const toml::parse_error& e) {
        *error =
            "line " + std::to_string(e.source().begin.line) + ": " + std::string(e.description());
        return std::nullopt;
    }
    if (root["version"].value<int64_t>() != kStateVersion) {
        *error = "unknown or missing version";
        return std::nullopt;
    }
    const auto count = root["apps-count"].value<int64_t>();
    if (!count) {
        *error = "apps-count missing";
        return std::nullopt;
    }
    if (const auto sink = root["default-sink"].value<std::string>()) {
        store.default_sink_ = *sink;
    }
    if (const auto source = root["default-source"].value<std::string>()) {
        store.default_source_ = *source;
    }
    if (const toml::table* apps = root["apps"].as_table()) {
        for (const auto& [name, node] : *apps) {
            const toml::table* entry = node.as_table();
            if (entry == nullptr) {
                *error = "apps." + std::string(name.str()) + " is not a table";
                return std::nullopt;
            }
            Record record;
            // Strictly an integer: toml++ would read `false` as 0.
            const toml::value<int64_t>* seen = (*entry)["last-seen"].as_integer();
            if ((*entry)["last-seen"] && (seen == nullptr || seen->get() <= 0)) {
                *error = "apps." + std::string(name.str()) + " has an invalid last-seen";
                return std::nullopt;
            }
            record.last_seen = seen != nullptr ? seen->get() : 0;
            // An entry without settings only says when the application played.
            if ((*entry)["volume"] || (*entry)["muted"]) {
                AppSettings settings;
                const auto volume = (*entry)["volume"].value<double>();
                const auto muted = (*entry)["muted"].value<bool>();
                if (!volume || !std::isfinite(*volume) || *volume < 0 || *volume > 4 || !muted) {
                    *error = "apps." + std::string(name.str()) + " has no valid volume and muted";
                    return std::nullopt;
                }
                settings.volume = static_cast<float>(*volume);
                settings.muted = *muted;
                settings.sink = (*entry)["sink"].value_or(std::string());
                record.chosen = settings;
            } else if (!seen) {
                *error = "apps." + std::string(name.str()) + " has neither settings nor last-seen";
                return std::nullopt;
            }
            store.apps_[std::string(name.str())] = record;
        }
    }
    if (static_cast<int64_t>(store.apps_.size()) != *count) {
        *error = "truncated (" + std::to_string(store.apps_.size()) + " of " +
                 std::to_string(*count) + " applications)";
        return std::nullopt;
    }
    return store;
}

Status AppStateStore::load() {
    if (path_.empty()) {
        return Status::success();
    }
    std::ifstream in(path_, std::ios::binary);
    if (!in) {
        return Status::success(); // no state yet
    }
    std::ostringstream text;
    text << in.rdbuf();
    std::string error;
    auto parsed = parse(text.str(), &error);
    if (!parsed) {
        const std::string aside = path_ + ".corrupt";
        const bool moved = ::rename(path_.c_str(), aside.c_str()) == 0;
        return Status::failure("state file " + path_ + " is unreadable (" + error + "); " +
                               (moved ? "moved it to " + aside : "could not move it aside") +
                               " and starting with defaults");
    }
    apps_ = std::move(parsed->apps_);
    default_sink_ = std::move(parsed->default_sink_);
    default_source_ = std::move(parsed->default_source_);
    dirty_ = false;
    return Status::success();
}

std::optional<std::string> AppStateStore::take_all_text() {
    dirty_ = dirty_ || seen_changed_;
    return take_text();
}

Status AppStateStore::save_if_dirty() {
    const std::optional<std::string> text = take_text();
    if (!text) {
        return Status::success();
    }
    if (Status saved = replace_file_atomically(path_, *text); !saved.ok()) {
        dirty_ = true;
        return saved;
    }
    return Status::success();
}

std::optional<std::string> AppStateStore::take_text() {
    if (!dirty_ || path_.empty()) {
        return std::nullopt;
    }
    dirty_ = false;
    seen_changed_ = false;
    return serialize();
}

} // namespace audiod
