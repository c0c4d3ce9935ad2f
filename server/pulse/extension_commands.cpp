// The pulse server's EXTENSION command: module-stream-restore onto
// audiod's per-application state (stream_restore.h says how), and
// NOEXTENSION for every other extension, as libpulse expects of one the
// server does not have (pavucontrol asks for device-manager and
// device-restore too, and only logs that they are missing).
#include "engine/engine.h"
#include "pulse/engine_errors.h"
#include "pulse/pulse_server.h"

#include <algorithm>
#include <iterator>
#include <set>

namespace audiod::pulse {

namespace {

// The stream-restore version this server speaks (the only one there is).
constexpr uint32_t kStreamRestoreVersion = 1;

MaybeError apply_app_entry(Engine& engine, const std::string& app, const RestoreEntry& entry) {
    const bool moves = entry.device && !entry.device->empty();
    if (moves) {
        // Checked first, so that an entry is applied whole or not at all.
        const auto sinks = engine.list_sinks();
        if (std::none_of(sinks.begin(), sinks.end(),
                         [&](const proto::SinkInfo& sink) { return sink.name == *entry.device; })) {
            return ClientError{AUDIOD_E_NOENTITY, "no sink named '" + *entry.device + "'"};
        }
    }
    if (!entry.volume.values.empty()) {
        proto::SetVolume r;
        r.target = static_cast<uint32_t>(proto::VolumeTarget::app);
        r.name = app;
        r.mode = static_cast<uint32_t>(proto::VolumeMode::absolute);
        r.value = linear_gain(entry.volume);
        if (MaybeError failed = engine.set_volume(r)) {
            return failed;
        }
    }
    proto::SetMute mute;
    mute.target = static_cast<uint32_t>(proto::VolumeTarget::app);
    mute.name = app;
    mute.mode = static_cast<uint32_t>(entry.muted ? proto::MuteMode::on : proto::MuteMode::off);
    if (MaybeError failed = engine.set_mute(mute)) {
        return failed;
    }
    if (moves) {
        proto::MoveStream move; // the application's streams, and its preference
        move.target = static_cast<uint32_t>(proto::VolumeTarget::app);
        move.app = app;
        move.device = *entry.device;
        return engine.move(move);
    }
    return std::nullopt;
}

// Writes stream-restore entries of applications. SET replaces the whole
// table: what it does not name is forgotten (of what is the caller's, on a
// shared server).
MaybeError apply_app_entries(Engine& engine,
                             const std::vector<std::pair<std::string, RestoreEntry>>& apps,
                             bool set, const AccessPolicy& policy, const Caller& caller) {
    if (set) {
        std::set<std::string> named;
        for (const auto& [app, entry] : apps) {
            named.insert(app);
        }
        for (const proto::AppInfo& app : engine.list_apps()) {
            if (app.remembered && named.count(app.name) == 0 &&
                owns_app(policy, caller, app.name)) {
                (void)engine.forget_app(app.name);
            }
        }
    }
    for (const auto& [app, entry] : apps) {
        if (MaybeError failed = apply_app_entry(engine, app, entry)) {
            return failed;
        }
    }
    return std::nullopt;
}

} // namespace

bool PulseServer::on_extension_command(Connection& connection, Command command, uint32_t tag,
                                       TagReader& fields) {
    if (command != Command::extension) {
        return false;
    }
    Session& session = *connection.session;
    uint32_t index = kInvalidIndex;
    std::optional<std::string> name;
    uint32_t subcommand = 0;
    if (!fields.get_u32(index) || !fields.get_string(name)) {
        session.reply_error(tag, Error::protocol);
        return true;
    }
    const bool restore = name ? *name == kStreamRestore : index == kStreamRestoreIndex;
    if (!restore) {
        session.reply_error(tag, Error::noextension);
        return true;
    }
    if (!fields.get_u32(subcommand)) {
        session.reply_error(tag, Error::protocol);
        return true;
    }
    const uint32_t id = connection.id;
    switch (static_cast<RestoreCommand>(subcommand)) {
    case RestoreCommand::test:
        fields.done() ? session.reply(tag, TagWriter().put_u32(kStreamRestoreVersion))
                      : session.reply_error(tag, Error::protocol);
        return true;
    case RestoreCommand::subscribe: {
        bool enable = false;
        if (!fields.get_bool(enable) || !fields.done()) {
            session.reply_error(tag, Error::protocol);
            return true;
        }
        connection.restore_subscribed = enable;
        connection.restore_event_held = false;
        session.reply(tag);
        return true;
    }
    case RestoreCommand::read:
        if (!fields.done()) {
            session.reply_error(tag, Error::protocol);
            return true;
        }
        post_job([this, id, tag, policy = policy_, caller = caller_of(connection),
                  shelf = shelf_of(connection)](Engine& engine) {
            TagWriter w;
            std::vector<proto::AppInfo> apps = engine.list_apps();
            show_apps(policy, caller, apps);
            for (const proto::AppInfo& app : apps) {
                put_restore_entry(w, restore_entry(app, engine.config().channels));
            }
            auto entries = std::make_shared<TagWriter>(std::move(w));
            return EngineGateway::Answer([this, id, tag, entries, shelf] {
                for (auto it = kept_restore_entries_.lower_bound({shelf, ""});
                     it != kept_restore_entries_.end() && it->first.first == shelf; ++it) {
                    put_restore_entry(*entries, it->second);
                }
                with_connection(id, [&](Connection& c) { c.session->reply(tag, *entries); });
            });
        });
        return true;
    case RestoreCommand::write:
        write_restore_entries(connection, tag, fields);
        return true;
    case RestoreCommand::remove: {
        std::vector<std::string> apps;
        while (fields.remaining() > 0) {
            std::string entry_name;
            if (!fields.get_string(entry_name)) {
                session.reply_error(tag, Error::protocol);
                return true;
            }
            if (auto app = app_of_entry(entry_name)) {
                apps.push_back(requested_app(policy_, caller_of(connection), *app));
            } else {
                kept_restore_entries_.erase({shelf_of(connection), entry_name});
            }
        }
        post_control(id, tag, [apps](Engine& engine) -> MaybeError {
            for (const std::string& app : apps) {
                // Nothing remembered about it is what was asked for.
                if (MaybeError failed = engine.forget_app(app);
                    failed && failed->code != AUDIOD_E_NOENTITY) {
                    return failed;
                }
            }
            return std::nullopt;
        });
        return true;
    }
    default:
        session.reply_error(tag, Error::protocol);
        return true;
    }
}

void PulseServer::write_restore_entries(Connection& connection, uint32_t tag, TagReader& fields) {
    Session& session = *connection.session;
    uint32_t mode = 0;
    bool apply_now = false;
    if (!fields.get_u32(mode) || !fields.get_bool(apply_now) ||
        mode > static_cast<uint32_t>(RestoreMode::replace)) {
        session.reply_error(tag, Error::protocol);
        return;
    }
    std::vector<std::pair<std::string, RestoreEntry>> apps;
    std::vector<RestoreEntry> others;
    while (fields.remaining() > 0) {
        RestoreEntry entry;
        if (!get_restore_entry(fields, entry)) {
            session.reply_error(tag, Error::protocol);
            return;
        }
        if (auto app = app_of_entry(entry.name)) {
            apps.emplace_back(requested_app(policy_, caller_of(connection), *app),
                              std::move(entry));
        } else {
            others.push_back(std::move(entry));
        }
    }
    const bool set = static_cast<RestoreMode>(mode) == RestoreMode::set;
    const uint32_t shelf = shelf_of(connection);
    const auto first = kept_restore_entries_.lower_bound({shelf, ""});
    auto end = first;
    while (end != kept_restore_entries_.end() && end->first.first == shelf) {
        ++end;
    }
    if (set) {
        kept_restore_entries_.erase(first, end);
    }
    size_t kept = set ? 0 : static_cast<size_t>(std::distance(first, end));
    for (RestoreEntry& entry : others) {
        std::pair<uint32_t, std::string> key{shelf, entry.name};
        if (kept_restore_entries_.count(key) == 0) {
            if (kept >= kMaxKeptRestoreEntries) {
                session.reply_error(tag, Error::toolarge);
                return;
            }
            ++kept;
        }
        kept_restore_entries_[std::move(key)] = std::move(entry);
    }
    // audiod's per-application state applies at once, whatever
    // apply_immediately says: it is what plays now as well as what starts.
    post_control(connection.id, tag,
                 [apps, set, policy = policy_, caller = caller_of(connection)](Engine& engine) {
                     return apply_app_entries(engine, apps, set, policy, caller);
                 });
}

void PulseServer::tell_restore_changed() {
    std::vector<uint32_t> told;
    for (const auto& [id, connection] : connections_) {
        if (connection->restore_subscribed) {
            told.push_back(id);
        }
    }
    for (const uint32_t id : told) {
        with_connection(id, [&](Connection& connection) { tell_restore_changed(connection); });
    }
}

void PulseServer::tell_restore_changed(Connection& connection) {
    // One event says "read again": a client that does not read is told
    // once, when it reads again, however often the state changed.
    if (backed_up(connection)) {
        connection.restore_event_held = true;
        return;
    }
    connection.restore_event_held = false;
    TagWriter w;
    w.put_u32(kStreamRestoreIndex);
    w.put_string(std::string(kStreamRestore));
    w.put_u32(static_cast<uint32_t>(RestoreCommand::event));
    connection.session->send_command(Command::extension, w);
}

} // namespace audiod::pulse
