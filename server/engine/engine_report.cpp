// Engine: what `audioctl list` and `info` show, and state-change events.
#include "engine/engine.h"

#include "os/memory_lock.h"
#include "protocol/version.h"

#include <algorithm>
#include <map>
#include <unistd.h>

namespace audiod {

bool Engine::is_stalled(const Stream& stream) const {
    const uint64_t starved = uint64_t{stream.starved_cycles.load(std::memory_order_relaxed)} *
                             stream.device->format().quantum;
    return starved * 1000 >= uint64_t{config_.stall_timeout_ms} * stream.rate;
}

std::string Engine::state_name(const Stream& stream) const {
    if (stream.moving_to != nullptr) {
        return "moving";
    }
    if (stream.paused) {
        return "paused";
    }
    switch (stream.rt_status.load(std::memory_order_relaxed)) {
    case RtStreamStatus::prebuffering:
        return "starting";
    case RtStreamStatus::playing:
        return is_stalled(stream) ? "stalled" : "running";
    case RtStreamStatus::draining:
        return "draining";
    case RtStreamStatus::drained:
        return "drained";
    }
    return "unknown";
}

std::vector<proto::SinkInfo> Engine::list_sinks() const {
    std::vector<proto::SinkInfo> out;
    const Device* chosen = default_sink();
    for (const DeviceEntry& entry : devices_) {
        const Device& sink = *entry.device;
        if (sink.is_source()) {
            continue; // a source: `list sources`
        }
        proto::SinkInfo info;
        info.name = sink.name();
        info.type = sink.type();
        info.rate = sink.format().rate;
        info.channels = sink.format().channels;
        info.quantum = sink.format().quantum;
        info.format = static_cast<uint32_t>(sink.sample_format());
        info.volume = sink.volume;
        info.muted = sink.muted;
        info.is_default = &sink == chosen;
        info.frames = sink.frames_played();
        info.xruns = sink.xruns();
        info.streams = static_cast<uint32_t>(sink.attached_streams);
        info.state = sink.failed() ? "failed" : sink.progress.stalled ? "stalled" : "running";
        info.scheduling = sink.scheduling();
        info.latency_frames = sink.latency_frames();
        info.details = sink.details();
        out.push_back(std::move(info));
    }
    return out;
}

std::vector<proto::StreamInfo> Engine::list_streams() const {
    std::vector<proto::StreamInfo> out;
    for (const auto& [id, stream] : streams_) {
        if (stream->detaching) {
            continue;
        }
        proto::StreamInfo info;
        info.id = id;
        info.client_id = stream->client_id;
        info.pid = stream->pid;
        info.app = stream->app;
        info.sink = endpoint_name(*stream);
        info.direction = static_cast<uint32_t>(stream->record ? proto::StreamDirection::record
                                                              : proto::StreamDirection::playback);
        info.state = state_name(*stream);
        info.volume = stream->volume;
        info.muted = stream->muted;
        info.xruns = stream->xruns.load(std::memory_order_relaxed);
        info.format = static_cast<uint32_t>(stream->format);
        info.rate = stream->rate;
        info.channels = stream->channels;
        info.buffer_frames = stream->ring.capacity();
        info.position = stream->consumed.load(std::memory_order_relaxed);
        out.push_back(std::move(info));
    }
    return out;
}

std::vector<proto::SourceInfo> Engine::list_sources() const {
    std::vector<proto::SourceInfo> out;
    for (const DeviceEntry& entry : devices_) {
        const Device& sink = *entry.device;
        proto::SourceInfo info;
        info.name = sink.is_source() ? sink.name() : sink.name() + std::string(kMonitorSuffix);
        info.type = sink.is_source() ? sink.type() : "monitor";
        info.sink = sink.is_source() ? "" : sink.name();
        info.rate = sink.format().rate;
        info.channels = sink.format().channels;
        info.state = sink.failed() ? "failed" : "running";
        info.latency_frames = sink.is_source() ? sink.latency_frames() : 0;
        info.xruns = sink.is_source() ? sink.xruns() : 0;
        info.details = sink.is_source() ? sink.details() : "";
        if (const SourcePlayer* player = sink.is_source() ? player_of(sink) : nullptr) {
            if (!info.details.empty() && info.details.back() != '\n') {
                info.details += '\n';
            }
            info.details += player_details(*player);
        }
        for (const auto& [id, stream] : streams_) {
            info.streams += stream->record && !stream->detaching && stream->destination() == &sink;
        }
        out.push_back(std::move(info));
    }
    return out;
}

std::vector<proto::AppInfo> Engine::list_apps() const {
    std::map<std::string, uint32_t> playing;
    for (const auto& [id, stream] : streams_) {
        if (!stream->detaching && !stream->record) {
            ++playing[stream->app];
        }
    }
    std::vector<std::string> names = state_.names();
    for (const auto& [name, count] : playing) {
        names.push_back(name);
    }
    std::sort(names.begin(), names.end());
    names.erase(std::unique(names.begin(), names.end()), names.end());
    std::vector<proto::AppInfo> out;
    for (const std::string& name : names) {
        const AppSettings settings = state_.get(name);
        proto::AppInfo info;
        info.name = name;
        info.volume = settings.volume;
        info.muted = settings.muted;
        info.sink = settings.sink;
        const auto it = playing.find(name);
        info.streams = it == playing.end() ? 0 : it->second;
        info.last_seen = static_cast<uint64_t>(state_.last_seen(name));
        info.rule = state_.has_rule(name);
        info.remembered = state_.remembered(name);
        out.push_back(std::move(info));
    }
    return out;
}

proto::ServerInfo Engine::info() const {
    proto::ServerInfo info;
    info.version = AUDIOD_VERSION_STRING;
    info.pid = static_cast<uint32_t>(::getpid());
    info.rate = config_.rate;
    info.channels = config_.channels;
    info.quantum = config_.quantum;
    info.uptime_ms = static_cast<uint64_t>(std::chrono::duration_cast<std::chrono::milliseconds>(
                                               std::chrono::steady_clock::now() - started_at_)
                                               .count());
    for (const DeviceEntry& entry : devices_) {
        if (!entry.device->failed()) {
            info.scheduling = entry.device->scheduling();
            break;
        }
    }
    const Device* chosen = default_sink();
    info.default_sink = chosen != nullptr ? chosen->name() : "";
    info.streams = static_cast<uint32_t>(list_streams().size());
    info.sinks = static_cast<uint32_t>(
        std::count_if(devices_.begin(), devices_.end(),
                      [](const DeviceEntry& e) { return !e.device->is_source(); }));
    info.state_file = state_.path();
    info.memory = memory_lock_status();
    return info;
}

void Engine::report_state_changes() {
    for (auto& [id, stream] : streams_) {
        if (stream->detaching) {
            continue;
        }
        std::string state = state_name(*stream);
        if (state != stream->reported_state) {
            stream->reported_state = std::move(state);
            emit(stream_event("stream-changed", *stream));
        }
    }
}

} // namespace audiod
