#include "engine/status_report.h"

#include "os/memory_lock.h"
#include "protocol/version.h"

#include <algorithm>
#include <map>
#include <unistd.h>

namespace audiod {

StatusReport::StatusReport(const DeviceRegistry& devices, const StreamTable& streams,
                           const Relays& relays, const Groups& groups, const AppStateStore& state,
                           Announcer& announcer, const ServerConfig& config)
    : devices_(devices)
    , streams_(streams)
    , relays_(relays)
    , groups_(groups)
    , state_(state)
    , announcer_(announcer)
    , config_(config) {}

bool StatusReport::is_stalled(const Stream& stream) const {
    const uint64_t starved = uint64_t{stream.starved_cycles.load(std::memory_order_relaxed)} *
                             stream.device()->format().quantum;
    return starved * 1000 >= uint64_t{config_.stall_timeout_ms} * stream.rate;
}

std::string StatusReport::state_of(const Stream& stream) const {
    if (stream.placement.moving()) {
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

std::vector<proto::SinkInfo> StatusReport::sinks() const {
    std::vector<proto::SinkInfo> out;
    const Device* chosen = devices_.default_sink();
    for (const auto& entry : devices_.entries()) {
        const Device& sink = *entry->device;
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
        info.volume = entry->volume;
        info.muted = entry->muted;
        info.is_default = &sink == chosen;
        info.frames = sink.frames_played();
        info.xruns = sink.xruns();
        info.streams = static_cast<uint32_t>(streams_.count_on(sink));
        info.state = entry->suspended          ? "suspended"
                     : sink.failed()           ? "failed"
                     : entry->progress.stalled ? "stalled"
                                               : "running";
        info.scheduling = sink.scheduling();
        info.latency_frames = sink.latency_frames();
        info.details = sink.details();
        if (const std::string group = groups_.details(sink); !group.empty()) {
            if (!info.details.empty() && info.details.back() != '\n') {
                info.details += '\n';
            }
            info.details += group;
        }
        out.push_back(std::move(info));
    }
    return out;
}

std::vector<proto::StreamInfo> StatusReport::streams() const {
    std::vector<proto::StreamInfo> out;
    for (const auto& [id, stream] : streams_.all()) {
        if (stream->placement.closing()) {
            continue;
        }
        proto::StreamInfo info;
        info.id = id;
        info.client_id = stream->client_id;
        info.pid = stream->pid;
        info.app = stream->app;
        info.device = endpoint_name(*stream);
        info.direction = static_cast<uint32_t>(stream->record ? proto::StreamDirection::record
                                                              : proto::StreamDirection::playback);
        info.state = state_of(*stream);
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

std::vector<proto::SourceInfo> StatusReport::sources() const {
    std::vector<proto::SourceInfo> out;
    const std::string default_source = devices_.default_source();
    for (const auto& entry : devices_.entries()) {
        const Device& device = *entry->device;
        const bool capture = device.is_source();
        proto::SourceInfo info;
        info.name = capture ? device.name() : device.name() + std::string(kMonitorSuffix);
        info.type = capture ? device.type() : "monitor";
        info.sink = capture ? "" : device.name();
        info.rate = device.format().rate;
        info.channels = device.format().channels;
        info.state = entry->suspended ? "suspended" : device.failed() ? "failed" : "running";
        if (capture) {
            info.volume = entry->volume;
            info.muted = entry->muted;
        }
        info.is_default = info.name == default_source;
        info.latency_frames = capture ? device.latency_frames() : 0;
        info.xruns = capture ? device.xruns() : 0;
        info.details = capture ? device.details() : "";
        if (const SourceRelay* relay = capture ? relays_.of(device) : nullptr) {
            if (!info.details.empty() && info.details.back() != '\n') {
                info.details += '\n';
            }
            info.details += Relays::details(*relay);
        }
        for (const auto& [id, stream] : streams_.all()) {
            info.streams += stream->record && !stream->placement.closing() &&
                            stream->placement.destination() == &device;
        }
        out.push_back(std::move(info));
    }
    return out;
}

std::vector<proto::AppInfo> StatusReport::apps() const {
    std::map<std::string, uint32_t> playing;
    for (const auto& [id, stream] : streams_.all()) {
        if (!stream->placement.closing() && !stream->record) {
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

proto::ServerInfo StatusReport::info() const {
    proto::ServerInfo info;
    info.version = AUDIOD_VERSION_STRING;
    info.pid = static_cast<uint32_t>(::getpid());
    info.rate = config_.rate;
    info.channels = config_.channels;
    info.quantum = config_.quantum;
    info.uptime_ms = static_cast<uint64_t>(std::chrono::duration_cast<std::chrono::milliseconds>(
                                               std::chrono::steady_clock::now() - started_at_)
                                               .count());
    for (const auto& entry : devices_.entries()) {
        if (!entry->device->failed()) {
            info.scheduling = entry->device->scheduling();
            break;
        }
    }
    const Device* chosen = devices_.default_sink();
    info.default_sink = chosen != nullptr ? chosen->name() : "";
    info.default_source = devices_.default_source();
    info.streams = static_cast<uint32_t>(streams().size());
    info.sinks = static_cast<uint32_t>(devices_.count(DeviceKind::sink));
    info.state_file = state_.path();
    info.memory = memory_lock_status();
    return info;
}

void StatusReport::announce_changes() {
    for (const auto& [id, stream] : streams_.all()) {
        if (stream->placement.closing()) {
            continue;
        }
        if (announcer_.set_announced_state(id, state_of(*stream))) {
            announcer_.stream_event("stream-changed", *stream);
        }
    }
}

} // namespace audiod
