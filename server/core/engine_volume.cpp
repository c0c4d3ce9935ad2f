// Engine: volume and mute of streams, applications and sinks.
#include "engine.h"

#include "audiod/audiod.h"

#include <algorithm>
#include <cmath>

namespace audiod {

namespace {

constexpr float kMaxGain = 4.0f; // +12 dB

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

void Engine::apply_gain(Stream& stream) {
    // A stream between sinks gets its gain when it lands.
    if (!stream.in_transit()) {
        send_or_queue(*stream.sink, gain_command(stream));
    }
}

void Engine::apply_app(const std::string& app) {
    for (auto& [id, stream] : streams_) {
        if (stream->app == app) {
            apply_gain(*stream);
        }
    }
}

MaybeError Engine::set_volume(const proto::SetVolume& request) {
    const auto invalid = ClientError{AUDIOD_E_INVALID, "invalid volume change"};
    switch (static_cast<proto::VolumeTarget>(request.target)) {
    case proto::VolumeTarget::stream: {
        Stream* stream = find_stream(request.stream_id);
        if (stream == nullptr) {
            return ClientError{AUDIOD_E_NOENTITY,
                               "no stream with id " + std::to_string(request.stream_id)};
        }
        const auto next = adjust(stream->volume, request.mode, request.value);
        if (!next) {
            return invalid;
        }
        stream->volume = *next;
        apply_gain(*stream);
        emit(stream_event("stream-changed", *stream));
        return std::nullopt;
    }
    case proto::VolumeTarget::app: {
        const bool playing = std::any_of(streams_.begin(), streams_.end(), [&](const auto& e) {
            return e.second->app == request.name;
        });
        if (!playing && state_.all().count(request.name) == 0) {
            return ClientError{AUDIOD_E_NOENTITY, "no application named '" + request.name +
                                                      "' (no streams, nothing remembered)"};
        }
        AppSettings settings = state_.get(request.name);
        const auto next = adjust(settings.volume, request.mode, request.value);
        if (!next) {
            return invalid;
        }
        settings.volume = *next;
        state_.set(request.name, settings);
        apply_app(request.name);
        proto::Event event;
        event.kind = "app-changed";
        event.app = request.name;
        event.volume = settings.volume;
        event.muted = settings.muted;
        emit(event);
        return std::nullopt;
    }
    case proto::VolumeTarget::sink: {
        Sink* sink = find_sink(request.name);
        if (sink == nullptr) {
            return ClientError{AUDIOD_E_NOENTITY, "no sink named '" + request.name + "'"};
        }
        const auto next = adjust(sink->volume, request.mode, request.value);
        if (!next) {
            return invalid;
        }
        sink->volume = *next;
        send_or_queue(*sink, {RtCommand::Kind::sink_gain, nullptr, sink->muted ? 0.0f : *next});
        proto::Event event;
        event.kind = "sink-changed";
        event.sink = sink->name();
        event.volume = sink->volume;
        event.muted = sink->muted;
        emit(event);
        return std::nullopt;
    }
    }
    return ClientError{AUDIOD_E_INVALID, "unknown volume target"};
}

MaybeError Engine::set_mute(const proto::SetMute& request) {
    const auto invalid = ClientError{AUDIOD_E_INVALID, "unknown mute mode"};
    switch (static_cast<proto::VolumeTarget>(request.target)) {
    case proto::VolumeTarget::stream: {
        Stream* stream = find_stream(request.stream_id);
        if (stream == nullptr) {
            return ClientError{AUDIOD_E_NOENTITY,
                               "no stream with id " + std::to_string(request.stream_id)};
        }
        const auto muted = toggle(stream->muted, request.mode);
        if (!muted) {
            return invalid;
        }
        stream->muted = *muted;
        apply_gain(*stream);
        emit(stream_event("stream-changed", *stream));
        return std::nullopt;
    }
    case proto::VolumeTarget::app: {
        const bool playing = std::any_of(streams_.begin(), streams_.end(), [&](const auto& e) {
            return e.second->app == request.name;
        });
        if (!playing && state_.all().count(request.name) == 0) {
            return ClientError{AUDIOD_E_NOENTITY, "no application named '" + request.name +
                                                      "' (no streams, nothing remembered)"};
        }
        AppSettings settings = state_.get(request.name);
        const auto muted = toggle(settings.muted, request.mode);
        if (!muted) {
            return invalid;
        }
        // Muting keeps the volume: unmuting brings back the level it had.
        settings.muted = *muted;
        state_.set(request.name, settings);
        apply_app(request.name);
        proto::Event event;
        event.kind = "app-changed";
        event.app = request.name;
        event.volume = settings.volume;
        event.muted = settings.muted;
        emit(event);
        return std::nullopt;
    }
    case proto::VolumeTarget::sink: {
        Sink* sink = find_sink(request.name);
        if (sink == nullptr) {
            return ClientError{AUDIOD_E_NOENTITY, "no sink named '" + request.name + "'"};
        }
        const auto muted = toggle(sink->muted, request.mode);
        if (!muted) {
            return invalid;
        }
        sink->muted = *muted;
        send_or_queue(*sink,
                      {RtCommand::Kind::sink_gain, nullptr, sink->muted ? 0.0f : sink->volume});
        proto::Event event;
        event.kind = "sink-changed";
        event.sink = sink->name();
        event.volume = sink->volume;
        event.muted = sink->muted;
        emit(event);
        return std::nullopt;
    }
    }
    return ClientError{AUDIOD_E_INVALID, "unknown mute target"};
}

} // namespace audiod
