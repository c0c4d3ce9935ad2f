// The pulse server's control: volumes and mutes, the default sink, moves
// and kills, mapped onto the engine's own operations (the same that
// `audioctl` uses), so what pavucontrol sets is what `audioctl` shows.
#include "engine/engine.h"
#include "pulse/engine_errors.h"
#include "pulse/introspection.h"
#include "pulse/pulse_server.h"
#include "pulse/stream_request.h"

namespace audiod::pulse {

namespace {

// The engine name of the sink (or source) a client named (an index was
// turned into a name on the pulse thread; none: the default).
std::optional<std::string> device_name(const Engine& engine, bool sink,
                                       const std::optional<std::string>& name) {
    EngineSnapshot snapshot;
    snapshot.default_sink = engine.info().default_sink;
    snapshot.default_source = engine.default_source();
    if (sink) {
        snapshot.sinks = engine.list_sinks();
        const auto found = find_sink(snapshot, kInvalidIndex, name);
        return found ? std::optional(snapshot.sinks[*found].name) : std::nullopt;
    }
    snapshot.sources = engine.list_sources();
    const auto found = find_source(snapshot, kInvalidIndex, name);
    return found ? std::optional(snapshot.sources[*found].name) : std::nullopt;
}

MaybeError no_entity() {
    return ClientError{AUDIOD_E_NOENTITY, "no such entity"};
}

// On a shared server, a user's own streams only (an admin's: any).
MaybeError check_owner(const Engine& engine, const AccessPolicy& policy, const Caller& caller,
                       uint32_t stream_id) {
    const Stream* stream = engine.find_stream(stream_id);
    if (stream == nullptr || owns_app(policy, caller, stream->app)) {
        return std::nullopt; // the operation says whether there is one
    }
    return ClientError{AUDIOD_E_DENIED,
                       "stream " + std::to_string(stream_id) + " belongs to another user"};
}

// What changes things every user shares: a sink's or source's volume,
// mute or suspension, the defaults.
bool changes_shared(Command command) {
    switch (command) {
    case Command::set_sink_volume:
    case Command::set_sink_mute:
    case Command::set_source_volume:
    case Command::set_source_mute:
    case Command::suspend_sink:
    case Command::suspend_source:
    case Command::set_default_sink:
    case Command::set_default_source:
        return true;
    default:
        return false;
    }
}

// Suspends (or resumes) the device a client named, or every one of that
// kind (`name` none); a monitor goes with its sink.
MaybeError suspend(Engine& engine, DeviceKind kind, const std::optional<std::string>& name,
                   bool suspended) {
    const bool sink = kind == DeviceKind::sink;
    if (name) {
        const auto device = device_name(engine, sink, *name);
        if (!device) {
            return no_entity();
        }
        if (!sink && !monitored_sink(*device).empty()) {
            return ClientError{AUDIOD_E_NOTSUPPORTED, "a monitor is suspended with its sink"};
        }
        return engine.suspend_device(kind, *device, suspended);
    }
    std::vector<std::string> every;
    if (sink) {
        for (const proto::SinkInfo& info : engine.list_sinks()) {
            every.push_back(info.name);
        }
    } else {
        for (const proto::SourceInfo& info : engine.list_sources()) {
            if (info.type != "monitor") {
                every.push_back(info.name);
            }
        }
    }
    MaybeError first;
    for (const std::string& device : every) {
        if (MaybeError failed = engine.suspend_device(kind, device, suspended); failed && !first) {
            first = failed;
        }
    }
    return first;
}

MaybeError stream_volume(Engine& engine, uint32_t stream_id, float gain) {
    proto::SetVolume r;
    r.target = static_cast<uint32_t>(proto::VolumeTarget::stream);
    r.stream_id = stream_id;
    r.mode = static_cast<uint32_t>(proto::VolumeMode::absolute);
    r.value = gain;
    return engine.set_volume(r);
}

MaybeError stream_mute(Engine& engine, uint32_t stream_id, bool muted) {
    proto::SetMute r;
    r.target = static_cast<uint32_t>(proto::VolumeTarget::stream);
    r.stream_id = stream_id;
    r.mode = static_cast<uint32_t>(muted ? proto::MuteMode::on : proto::MuteMode::off);
    return engine.set_mute(r);
}

} // namespace

void PulseServer::post_control(uint32_t id, uint32_t tag,
                               std::function<MaybeError(Engine&)> operation) {
    post_job([this, id, tag, operation = std::move(operation)](Engine& engine) {
        const MaybeError failed = operation(engine);
        const Error code = failed ? pulse_error(failed->code) : Error::ok;
        return EngineGateway::Answer([this, id, tag, code] {
            with_connection(id, [&](Connection& c) {
                code == Error::ok ? c.session->reply(tag) : c.session->reply_error(tag, code);
            });
        });
    });
}

bool PulseServer::on_control_command(Connection& connection, Command command, uint32_t tag,
                                     TagReader& fields) {
    uint32_t index = kInvalidIndex;
    std::optional<std::string> name;
    ChannelVolumes volume;
    bool flag = false;
    uint32_t to_index = kInvalidIndex;
    std::optional<std::string> to_name;
    switch (command) {
    case Command::set_sink_volume:
    case Command::set_source_volume:
        fields.get_u32(index);
        fields.get_string(name);
        fields.get_channel_volumes(volume);
        break;
    case Command::set_sink_mute:
    case Command::set_source_mute:
    case Command::suspend_sink:
    case Command::suspend_source:
        fields.get_u32(index);
        fields.get_string(name);
        fields.get_bool(flag);
        break;
    case Command::set_sink_input_volume:
    case Command::set_source_output_volume:
        fields.get_u32(index);
        fields.get_channel_volumes(volume);
        break;
    case Command::set_sink_input_mute:
    case Command::set_source_output_mute:
        fields.get_u32(index);
        fields.get_bool(flag);
        break;
    case Command::set_default_sink:
    case Command::set_default_source:
        fields.get_string(name);
        break;
    case Command::move_sink_input:
    case Command::move_source_output:
        fields.get_u32(index);
        fields.get_u32(to_index);
        fields.get_string(to_name);
        break;
    case Command::kill_sink_input:
    case Command::kill_source_output:
    case Command::kill_client:
        fields.get_u32(index);
        break;
    default:
        return false;
    }
    Session& session = *connection.session;
    if (!fields.done()) {
        session.reply_error(tag, Error::protocol);
        return true;
    }
    if (changes_shared(command) && !connection.admin) {
        session.reply_error(tag, Error::access);
        return true;
    }
    // Device indices are the pulse thread's: named here, for the engine.
    const bool on_sources = command == Command::set_source_volume ||
                            command == Command::set_source_mute ||
                            command == Command::suspend_source;
    if (index != kInvalidIndex &&
        (command == Command::set_sink_volume || command == Command::set_sink_mute ||
         command == Command::suspend_sink || on_sources)) {
        name = (on_sources ? source_indices_ : sink_indices_).name(index);
        if (!name) {
            session.reply_error(tag, Error::noentity);
            return true;
        }
    }
    if (to_index != kInvalidIndex) {
        to_name =
            (command == Command::move_sink_input ? sink_indices_ : source_indices_).name(to_index);
        if (!to_name) {
            session.reply_error(tag, Error::noentity);
            return true;
        }
    }
    const uint32_t id = connection.id;
    const float gain = linear_gain(volume);
    const AccessPolicy policy = policy_;
    const Caller caller = caller_of(connection);
    switch (command) {
    case Command::set_sink_volume:
    case Command::set_sink_mute:
    case Command::set_source_volume:
    case Command::set_source_mute:
        // A monitor's level is its sink's: the engine says so (NOTSUPPORTED).
        post_control(id, tag, [=](Engine& engine) -> MaybeError {
            const auto device = device_name(engine, !on_sources, name);
            if (!device) {
                return no_entity();
            }
            const auto target = static_cast<uint32_t>(on_sources ? proto::VolumeTarget::source
                                                                 : proto::VolumeTarget::sink);
            if (command == Command::set_sink_mute || command == Command::set_source_mute) {
                proto::SetMute r;
                r.target = target;
                r.name = *device;
                r.mode = static_cast<uint32_t>(flag ? proto::MuteMode::on : proto::MuteMode::off);
                return engine.set_mute(r);
            }
            proto::SetVolume r;
            r.target = target;
            r.name = *device;
            r.mode = static_cast<uint32_t>(proto::VolumeMode::absolute);
            r.value = gain;
            return engine.set_volume(r);
        });
        return true;
    case Command::set_sink_input_volume:
    case Command::set_source_output_volume:
        post_control(id, tag, [=](Engine& engine) {
            MaybeError denied = check_owner(engine, policy, caller, index);
            return denied ? denied : stream_volume(engine, index, gain);
        });
        return true;
    case Command::set_sink_input_mute:
    case Command::set_source_output_mute:
        post_control(id, tag, [=](Engine& engine) {
            MaybeError denied = check_owner(engine, policy, caller, index);
            return denied ? denied : stream_mute(engine, index, flag);
        });
        return true;
    case Command::set_default_sink:
    case Command::set_default_source:
        post_control(id, tag, [=](Engine& engine) -> MaybeError {
            const bool sink = command == Command::set_default_sink;
            const auto device = device_name(engine, sink, name);
            if (!device) {
                return no_entity();
            }
            return sink ? engine.set_default_sink(*device) : engine.set_default_source(*device);
        });
        return true;
    case Command::move_sink_input:
    case Command::move_source_output:
        post_control(id, tag, [=](Engine& engine) -> MaybeError {
            if (MaybeError denied = check_owner(engine, policy, caller, index)) {
                return denied;
            }
            const auto device = device_name(engine, command == Command::move_sink_input, to_name);
            if (!device) {
                return no_entity();
            }
            proto::MoveStream r;
            r.target = static_cast<uint32_t>(proto::VolumeTarget::stream);
            r.stream_id = index;
            r.device = *device;
            return engine.move(r); // lossless, as every move in audiod
        });
        return true;
    case Command::kill_sink_input:
    case Command::kill_source_output:
        // A libpulse stream is told it was killed and ends; a libaudiod
        // program's streams are ended by `audioctl kill-client`.
        if (!may_end_stream(connection, index)) {
            session.reply_error(tag, Error::access);
            return true;
        }
        kill_stream(index, command == Command::kill_source_output)
            ? session.reply(tag)
            : session.reply_error(tag, Error::noentity);
        return true;
    case Command::kill_client:
        if (index == id || find(index) == nullptr) {
            session.reply_error(tag, find(index) == nullptr ? Error::noentity : Error::invalid);
            return true;
        }
        if (!sees(connection, *find(index))) {
            session.reply_error(tag, Error::access);
            return true;
        }
        session.reply(tag);
        doomed_.push_back(index);
        return true;
    case Command::suspend_sink:
    case Command::suspend_source:
        // No index, and an empty name (or none): every one, as pasuspender
        // asks through pa_context_suspend_sink_by_index(PA_INVALID_INDEX).
        post_control(
            id, tag,
            [=, every = index == kInvalidIndex && (!name || name->empty())](Engine& engine) {
                return suspend(engine, on_sources ? DeviceKind::source : DeviceKind::sink,
                               every ? std::nullopt : name, flag);
            });
        return true;
    default:
        session.reply_error(tag, Error::notsupported);
        return true;
    }
}

bool PulseServer::may_end_stream(const Connection& by, uint32_t stream_id) {
    const auto it = woken_by_.find(stream_id);
    if (by.admin || it == woken_by_.end()) {
        return true;
    }
    // A sample plays for no one user.
    const Connection* owner = find(it->second.connection);
    return owner != nullptr && sees(by, *owner);
}

bool PulseServer::kill_stream(uint32_t stream_id, bool record) {
    const auto it = woken_by_.find(stream_id);
    if (it == woken_by_.end() || it->second.record != record) {
        return false; // no libpulse stream's
    }
    if (it->second.connection == kNoConnection) {
        // A sample playing: no client to tell.
        const auto player = sample_players_.find(stream_id);
        if (player == sample_players_.end()) {
            return false;
        }
        end_stream(player->second.stream->wake_fd(), stream_id);
        sample_players_.erase(player);
        return true;
    }
    const Woken woken = it->second;
    with_connection(woken.connection, [&](Connection& c) {
        c.session->send_command(record ? Command::record_stream_killed
                                       : Command::playback_stream_killed,
                                TagWriter().put_u32(woken.channel));
        record ? close_record(c, woken.channel) : close_playback(c, woken.channel);
    });
    return true;
}

} // namespace audiod::pulse
