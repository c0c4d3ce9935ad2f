#include "engine/gains.h"

#include "engine/app_name.h"

#include "audiod/audiod.h"

#include <algorithm>
#include <cmath>
#include <optional>

namespace audiod {

namespace {

std::optional<float> adjust(float current, uint32_t mode, float value) {
    if (!std::isfinite(value)) {
        return std::nullopt;
    }
    float next = current;
    switch (static_cast<proto::VolumeMode>(mode)) {
    case proto::VolumeMode::absolute:
        next = value;
        break;
    case proto::VolumeMode::relative_linear:
        next = current + value;
        break;
    case proto::VolumeMode::relative_db:
        next = current * std::pow(10.0f, value / 20.0f);
        break;
    default:
        return std::nullopt;
    }
    if (!std::isfinite(next)) {
        return std::nullopt;
    }
    return std::clamp(next, 0.0f, kMaxGain);
}

std::optional<bool> toggle(bool current, uint32_t mode) {
    switch (static_cast<proto::MuteMode>(mode)) {
    case proto::MuteMode::on:
        return true;
    case proto::MuteMode::off:
        return false;
    case proto::MuteMode::toggle:
        return !current;
    }
    return std::nullopt;
}

} // namespace

Gains::Gains(StreamTable& streams, DeviceRegistry& devices, RtCommandQueue& commands,
             AppStateStore& state, const Announcer& announcer)
    : streams_(streams)
    , devices_(devices)
    , commands_(commands)
    , state_(state)
    , announcer_(announcer) {}

float Gains::stream_gain(const Stream& stream) const {
    if (stream.record) {
        return stream.muted ? 0.0f : stream.volume;
    }
    const AppSettings app = state_.get(stream.app);
    const bool silent = stream.muted || app.muted;
    return silent ? 0.0f : stream.volume * app.volume;
}

void Gains::apply(Stream& stream) {
    if (!stream.placement.in_transit()) {
        commands_.send(*stream.device(),
                       {RtCommand::Kind::stream_gain, &stream, stream_gain(stream)});
    }
}

void Gains::apply_all() {
    for (const auto& [id, stream] : streams_.all()) {
        if (!stream->placement.closing()) {
            apply(*stream);
        }
    }
}

void Gains::apply_device(Device& device) {
    const DeviceRegistry::Entry* entry = devices_.entry_of(device);
    if (entry != nullptr && (entry->muted || entry->volume != 1.0f)) {
        commands_.send(
            device, {RtCommand::Kind::device_gain, nullptr, entry->muted ? 0.0f : entry->volume});
    }
}

void Gains::apply_app(const std::string& app) {
    for (const auto& [id, stream] : streams_.all()) {
        if (stream->app == app) {
            apply(*stream);
        }
    }
    const AppSettings settings = state_.get(app);
    proto::Event event;
    event.kind = "app-changed";
    event.app = app;
    event.volume = settings.volume;
    event.muted = settings.muted;
    announcer_.event(event);
}

// A volume, mute or move of app:NAME may name an application that has never
// played: it is remembered and applies from its first frame (`audioctl list
// apps` shows which have played, so a typo is easy to spot).
MaybeError Gains::check_app(const std::string& app) {
    if (!is_valid_app_name(app)) {
        return ClientError{AUDIOD_E_INVALID,
                           "invalid application name (1 to 64 bytes, no control characters)"};
    }
    return std::nullopt;
}

MaybeError Gains::forget_app(const std::string& app) {
    if (MaybeError error = check_app(app)) {
        return error;
    }
    if (!state_.forget(app)) {
        return ClientError{AUDIOD_E_NOENTITY,
                           "nothing is remembered about application '" + app + "'"};
    }
    // Its rule or the defaults apply again, to what plays now too.
    apply_app(app);
    return std::nullopt;
}

template <class Change>
MaybeError Gains::change(uint32_t target, uint32_t stream_id, const std::string& name,
                         Change&& change) {
    switch (static_cast<proto::VolumeTarget>(target)) {
    case proto::VolumeTarget::stream: {
        Stream* stream = streams_.find(stream_id);
        if (stream == nullptr) {
            return ClientError{AUDIOD_E_NOENTITY, "no stream with id " + std::to_string(stream_id)};
        }
        if (!change(stream->volume, stream->muted)) {
            return ClientError{AUDIOD_E_INVALID, "invalid volume or mute change"};
        }
        apply(*stream);
        announcer_.stream_event("stream-changed", *stream);
        return std::nullopt;
    }
    case proto::VolumeTarget::app: {
        if (MaybeError error = check_app(name)) {
            return error;
        }
        AppSettings settings = state_.get(name);
        if (!change(settings.volume, settings.muted)) {
            return ClientError{AUDIOD_E_INVALID, "invalid volume or mute change"};
        }
        if (const Status stored = state_.set(name, settings); !stored.ok()) {
            return ClientError{AUDIOD_E_REFUSED, stored.reason()};
        }
        apply_app(name);
        return std::nullopt;
    }
    case proto::VolumeTarget::sink:
    case proto::VolumeTarget::source: {
        const bool sink = static_cast<proto::VolumeTarget>(target) == proto::VolumeTarget::sink;
        Device* device = devices_.find(name, sink ? DeviceKind::sink : DeviceKind::source);
        if (device == nullptr) {
            if (!sink && !monitored_sink(name).empty()) {
                return ClientError{AUDIOD_E_NOTSUPPORTED,
                                   "a monitor records what its sink plays: its level is the "
                                   "sink's (sink:" +
                                       monitored_sink(name) + ")"};
            }
            return ClientError{AUDIOD_E_NOENTITY, std::string("no ") + (sink ? "sink" : "source") +
                                                      " named '" + name + "'"};
        }
        DeviceRegistry::Entry& entry = *devices_.entry_of(*device);
        if (!change(entry.volume, entry.muted)) {
            return ClientError{AUDIOD_E_INVALID, "invalid volume or mute change"};
        }
        commands_.send(*device,
                       {RtCommand::Kind::device_gain, nullptr, entry.muted ? 0.0f : entry.volume});
        proto::Event event;
        event.kind = sink ? "sink-changed" : "source-changed";
        event.device = device->name();
        event.volume = entry.volume;
        event.muted = entry.muted;
        announcer_.event(event);
        return std::nullopt;
    }
    }
    return ClientError{AUDIOD_E_INVALID, "unknown volume target"};
}

MaybeError Gains::set_volume(const proto::SetVolume& request) {
    return change(request.target, request.stream_id, request.name, [&](float& volume, bool&) {
        const auto next = adjust(volume, request.mode, request.value);
        if (next) {
            volume = *next;
        }
        return next.has_value();
    });
}

MaybeError Gains::set_mute(const proto::SetMute& request) {
    // Muting keeps the volume: unmuting brings back the level it had.
    return change(request.target, request.stream_id, request.name, [&](float&, bool& muted) {
        const auto next = toggle(muted, request.mode);
        if (next) {
            muted = *next;
        }
        return next.has_value();
    });
}

} // namespace audiod
