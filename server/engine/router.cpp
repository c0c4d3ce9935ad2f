#include "engine/router.h"

#include "engine/stream_conversion.h"

#include "audiod/audiod.h"
#include "log.h"

#include <algorithm>

namespace audiod {

Router::Router(DeviceRegistry& devices, StreamTable& streams, RtCommandQueue& commands,
               Gains& gains, AppStateStore& state, Announcer& announcer, const ServerConfig& config)
    : devices_(devices)
    , streams_(streams)
    , commands_(commands)
    , gains_(gains)
    , state_(state)
    , announcer_(announcer)
    , config_(config) {}

std::variant<Placement, ClientError> Router::place(const StreamRequest& request) const {
    const proto::CreateStream& p = request.params;
    const bool record = p.direction == static_cast<uint32_t>(proto::StreamDirection::record);
    if (p.direction > 1) {
        return ClientError{AUDIOD_E_INVALID, "unknown stream direction"};
    }
    // An explicit device must exist; a remembered one is used when it does.
    // A record stream names a source: a capture source, "SINK.monitor", or
    // "" for the default sink's monitor.
    Device* device = nullptr;
    std::string home = p.device;
    std::string returns_to;
    if (record) {
        device = devices_.find_recordable(p.device, &home);
        if (device == nullptr && !p.device.empty()) {
            return ClientError{AUDIOD_E_NOENTITY, "no source named '" + p.device + "'"};
        }
    } else if (!p.device.empty()) {
        device = devices_.find_sink(p.device);
        if (device == nullptr) {
            return ClientError{AUDIOD_E_NOENTITY, "no sink named '" + p.device + "'"};
        }
    } else {
        // The application's remembered sink where it exists, else the
        // default; either may have failed, as below.
        home = state_.get(request.app).sink;
        device = home.empty() ? nullptr : devices_.find_sink(home);
        if (device == nullptr) {
            device = devices_.find_sink(devices_.default_name());
        }
        if (device == nullptr) {
            device = devices_.default_sink();
        }
    }
    // A device that has failed (gone, being reopened), asked for by name or
    // where the stream would have played: the stream plays, or records,
    // where the failure moved the others, and goes there when it comes
    // back, as they do. One the watchdog finds stalled is passed over the
    // same way where another can play or be recorded: a client whose
    // stream stalled creates it anew, and must not land where it stalled.
    if (device != nullptr && device->failed()) {
        returns_to = device->name();
        device = devices_.default_sink();
    } else if (device != nullptr && devices_.entry_of(*device)->progress.stalled) {
        if (Device* elsewhere = devices_.fallback_for(*device); elsewhere != nullptr) {
            returns_to = device->name();
            device = elsewhere;
        }
    }
    if (device == nullptr) {
        // Suspended on purpose (pasuspender, `audioctl suspend`): the
        // player is told so, rather than left waiting on a sink that will
        // not play until someone resumes it.
        const auto& entries = devices_.entries();
        if (std::any_of(entries.begin(), entries.end(), [](const auto& entry) {
                return entry->suspended && !entry->device->is_source();
            })) {
            return ClientError{AUDIOD_E_BUSY,
                               "every sink is suspended or has failed (`audioctl resume NAME` "
                               "or `pactl suspend-sink NAME 0` brings one back)"};
        }
        return ClientError{AUDIOD_E_NOENTITY, "no sink is available"};
    }
    Placement placement(device);
    placement.home = home;
    placement.returns_to = returns_to;
    return placement;
}

MaybeError Router::attach_new(Stream& stream) {
    Device& device = *stream.device();
    // Its application's remembered volume and mute apply from the first frame.
    stream.rt.gain.reset(gains_.stream_gain(stream));
    if (const Status prepared = prepare_conversion(stream, device.format(), device.latency_frames(),
                                                   config_.resample_quality);
        !prepared.ok()) {
        return ClientError{AUDIOD_E_NOMEM, prepared.reason()};
    }
    if (!device.send({RtCommand::Kind::attach, &stream, 1.0f})) {
        return ClientError{AUDIOD_E_BUSY, "sink '" + device.name() + "' is not responding"};
    }
    return std::nullopt;
}

MaybeError Router::set_paused(Stream& stream, bool paused) {
    if (stream.paused == paused) {
        return std::nullopt;
    }
    stream.paused = paused;
    if (!stream.placement.in_transit()) {
        commands_.send(*stream.device(),
                       {paused ? RtCommand::Kind::pause : RtCommand::Kind::resume, &stream, 1.0f});
    }
    announcer_.stream_event("stream-changed", stream);
    return std::nullopt;
}

MaybeError Router::flush(Stream& stream, uint64_t position) {
    if (stream.record) {
        return ClientError{AUDIOD_E_BADSTATE, "stream " + std::to_string(stream.id) +
                                                  " records; only a playback stream is flushed"};
    }
    Placement& placement = stream.placement;
    if (placement.closing()) {
        return std::nullopt; // nothing will play anyway
    }
    if (placement.moving()) {
        placement.flush_on_landing = position;
    } else if (placement.state() == Placement::State::parked || stream.device()->failed()) {
        flush_stream(stream, position); // no RT thread holds it
    } else {
        commands_.send(*stream.device(), {RtCommand::Kind::flush, &stream, 1.0f, position});
    }
    return std::nullopt;
}

void Router::close(Stream& stream) {
    if (stream.placement.closing()) {
        return;
    }
    state_.mark_seen_now(stream.app);
    change(stream, {Placement::Change::close, nullptr, nullptr, !stream.device()->failed()});
}

MaybeError Router::move(const proto::MoveStream& request) {
    // To a source ("SINK.monitor", or a capture source) moves record
    // streams, to a sink playback streams.
    std::string wanted;
    Device* source = devices_.find_sink(request.device) == nullptr && !request.device.empty()
                         ? devices_.find_recordable(request.device, &wanted)
                         : nullptr;
    const bool record = source != nullptr;
    Device* destination = record ? source : devices_.find_sink(request.device);
    if (destination == nullptr) {
        return ClientError{AUDIOD_E_NOENTITY, "no sink or source named '" + request.device + "'"};
    }
    if (destination->failed()) {
        return ClientError{AUDIOD_E_BUSY, "'" + request.device + "' has failed"};
    }
    std::vector<Stream*> moving;
    if (static_cast<proto::VolumeTarget>(request.target) == proto::VolumeTarget::stream) {
        Stream* stream = streams_.find(request.stream_id);
        if (stream == nullptr) {
            return ClientError{AUDIOD_E_NOENTITY,
                               "no stream with id " + std::to_string(request.stream_id)};
        }
        if (stream->record != record) {
            return ClientError{AUDIOD_E_INVALID,
                               record ? "a playback stream moves to a sink, not a source"
                                      : "a record stream moves to a source (SINK.monitor)"};
        }
        if (stream->placement.pinned) {
            return ClientError{
                AUDIOD_E_REFUSED,
                stream->record
                    ? "stream " + std::to_string(stream->id) + " records '" +
                          stream->device()->name() +
                          "' for playing; move its playback stream instead"
                    : "stream " + std::to_string(stream->id) + " plays a group on its member '" +
                          stream->device()->name() + "'; change the group's members instead"};
        }
        moving.push_back(stream);
    } else if (static_cast<proto::VolumeTarget>(request.target) == proto::VolumeTarget::app) {
        for (const auto& [id, stream] : streams_.all()) {
            if (stream->app == request.app && !stream->placement.closing() &&
                stream->record == record && !stream->placement.pinned) {
                moving.push_back(stream.get());
            }
        }
        if (MaybeError error = Gains::check_app(request.app)) {
            return error;
        }
    } else {
        return ClientError{AUDIOD_E_INVALID, "a move needs a stream id or an application"};
    }
    for (Stream* stream : moving) {
        stream->placement.home = destination->name();
        stream->placement.returns_to.clear(); // the user chose: no going back by itself
        move_to(*stream, *destination);
    }
    if (record) {
        return std::nullopt; // a preferred source is not remembered (yet)
    }
    // The application will prefer this sink from now on, across restarts.
    const std::string app = moving.empty() ? request.app : moving.front()->app;
    AppSettings settings = state_.get(app);
    settings.sink = destination->name();
    if (const Status stored = state_.set(app, settings); !stored.ok()) {
        return ClientError{AUDIOD_E_REFUSED, stored.reason()};
    }
    return std::nullopt;
}

void Router::move_to(Stream& stream, Device& destination) {
    if (stream.placement.closing() || stream.placement.destination() == &destination) {
        return;
    }
    const std::string previous = endpoint_name(stream);
    change(stream, {Placement::Change::move, &destination, nullptr, !stream.device()->failed()});
    log_info("engine", "stream moving id=" + std::to_string(stream.id) + " from=" + previous +
                           " to=" + endpoint_name(stream));
    announcer_.stream_moved(stream, previous);
}

void Router::handed_back(Stream& stream) {
    change(stream, {Placement::Change::handed_back});
}

void Router::rescue_from(Device& leaving) {
    Device* fallback = devices_.fallback_for(leaving);
    commands_.forget(leaving);
    // Freed after the others have moved: freeing changes the table.
    std::vector<Stream*> released;
    for (const auto& [id, owned] : streams_.all()) {
        Stream& stream = *owned;
        const bool closing = stream.placement.closing() && stream.device() == &leaving;
        if (closing) {
            released.push_back(&stream);
            continue;
        }
        const Placement::Action action =
            change(stream, {Placement::Change::rescue, fallback, &leaving});
        if (action == Placement::Action::land) {
            log_info("engine", "stream rescued id=" + std::to_string(stream.id) +
                                   " from=" + leaving.name() + " to=" + stream.device()->name());
            announcer_.stream_moved(stream, leaving.name() + (stream.record && !leaving.is_source()
                                                                  ? std::string(kMonitorSuffix)
                                                                  : ""));
        }
    }
    for (Stream* stream : released) {
        change(*stream, {Placement::Change::rescue, fallback, &leaving});
    }
}

void Router::replace(Device& old, Device& fresh) {
    commands_.forget(old);
    std::vector<Stream*> affected;
    for (const auto& [id, stream] : streams_.all()) {
        affected.push_back(stream.get());
    }
    for (Stream* stream : affected) {
        change(*stream, {Placement::Change::replace, &fresh, &old});
    }
}

void Router::bring_back(Device& arrived) {
    for (const auto& [id, stream] : streams_.all()) {
        Placement& placement = stream->placement;
        const Device* at = placement.destination();
        if (placement.returns_to == arrived.name() && at != nullptr && !placement.home.empty() &&
            at->name() == placement.home && !at->failed()) {
            // Home already: where it was when something failed under it
            // does not take it away.
            placement.returns_to.clear();
            continue;
        }
        const bool belongs =
            placement.home == arrived.name() || placement.returns_to == arrived.name();
        if (belongs && !placement.closing() && at != &arrived) {
            move_to(*stream, arrived);
        }
    }
}

Placement::Action Router::change(Stream& stream, const Placement::Step& step) {
    Device* leaving = stream.device();
    const Placement::Action action = stream.placement.apply(step);
    switch (action) {
    case Placement::Action::none:
        break;
    case Placement::Action::detach:
        commands_.send(*leaving, {RtCommand::Kind::detach, &stream, 1.0f});
        break;
    case Placement::Action::land:
        land(stream);
        break;
    case Placement::Action::release:
        release(stream);
        break;
    }
    return action;
}

void Router::land(Stream& stream) {
    Device& device = *stream.device();
    // What changed while no RT thread held the stream applies now.
    stream.rt.paused = stream.paused;
    if (stream.placement.flush_on_landing != kNoFrame) {
        flush_stream(stream, stream.placement.flush_on_landing);
        stream.placement.flush_on_landing = kNoFrame;
    }
    const float gain = gains_.stream_gain(stream);
    if (stream.rt.started) {
        stream.rt.gain.set_target(gain, device.ramp_frames());
    } else {
        stream.rt.gain.reset(gain);
    }
    if (const Status prepared = prepare_conversion(stream, device.format(), device.latency_frames(),
                                                   config_.resample_quality);
        !prepared.ok()) {
        // Only memory for a resampler can run out here. prepare_conversion
        // has still set the format and channel conversion for this device,
        // so the stream plays, at the wrong speed, until it moves again.
        log_error("engine", "stream " + std::to_string(stream.id) +
                                " plays unresampled: " + prepared.reason());
    }
    commands_.send(device, {RtCommand::Kind::attach, &stream, 1.0f});
}

void Router::release(Stream& stream) {
    log_info("engine", "stream closed id=" + std::to_string(stream.id) +
                           " underruns=" + std::to_string(stream.xruns.load()));
    announcer_.stream_event("stream-removed", stream);
    announcer_.forget(stream.id);
    streams_.erase(stream.id);
}

} // namespace audiod
