#include "engine.h"

#include "audiod/audiod.h"
#include "log.h"
#include "version.h"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <dirent.h>
#include <sys/eventfd.h>
#include <unistd.h>

namespace audiod {

namespace {

void host_log(int level, const char* component, const char* message) {
    log_message(static_cast<LogLevel>(std::clamp(level, 0, 3)), component ? component : "module",
                message ? message : "");
}

// A sound card is present when ALSA has a playback PCM device node.
bool sound_card_present() {
    DIR* dir = ::opendir("/dev/snd");
    if (dir == nullptr) {
        return false;
    }
    bool found = false;
    while (const dirent* entry = ::readdir(dir)) {
        const std::string name = entry->d_name;
        if (name.rfind("pcmC", 0) == 0 && name.back() == 'p') {
            found = true;
            break;
        }
    }
    ::closedir(dir);
    return found;
}

std::string state_name(const Stream& stream) {
    if (stream.paused) {
        return "paused";
    }
    switch (stream.rt_status.load(std::memory_order_relaxed)) {
    case RtStreamStatus::prebuffering:
        return "starting";
    case RtStreamStatus::playing:
        return "running";
    case RtStreamStatus::draining:
        return "draining";
    case RtStreamStatus::drained:
        return "drained";
    }
    return "unknown";
}

constexpr float kMaxGain = 4.0f; // +12 dB

} // namespace

Engine::Engine(ServerConfig config, ModuleLoader& modules)
    : config_(std::move(config))
    , modules_(modules) {
    host_.abi_version = AUDIOD_MODULE_ABI_VERSION;
    host_.log = host_log;
}

Engine::~Engine() {
    stop();
}

std::string Engine::start() {
    for (const SinkConfig& sink : config_.sinks) {
        if (std::string error = open_sink(sink); !error.empty()) {
            return "sink '" + sink.name + "': " + error;
        }
    }
    for (SinkEntry& entry : sinks_) {
        if (std::string error = entry.sink->start(); !error.empty()) {
            return "sink '" + entry.sink->name() + "': " + error;
        }
        log_info("engine", "sink started name=" + entry.sink->name() +
                               " type=" + entry.sink->type() + " scheduling=\"" +
                               entry.sink->scheduling() + "\"");
    }
    started_at_ = std::chrono::steady_clock::now();
    return {};
}

std::string Engine::open_sink(const SinkConfig& config) {
    std::string type = config.type;
    if (type == "auto") {
        // ALSA's default device where a sound card exists and the alsa module
        // is installed; otherwise a null sink keeps everything working.
        type = "null";
        if (sound_card_present()) {
            if (std::holds_alternative<const audiod_module*>(modules_.load("alsa"))) {
                type = "alsa";
            } else {
                log_warning("engine", "a sound card exists but the alsa module is not installed; "
                                      "using a null sink");
            }
        }
        log_info("engine", "sink " + config.name + ": type auto resolved to " + type);
    }
    const auto loaded = modules_.load(type);
    if (const auto* error = std::get_if<std::string>(&loaded)) {
        return *error;
    }
    SinkOpenRequest request;
    request.name = config.name;
    request.type = type;
    request.format = {config_.rate, config_.channels, config_.quantum};
    request.options = config.options;
    if (config.type == "auto" && type == "alsa") {
        request.options.emplace_back("device", "default");
    }
    request.rt_priority = config_.rt_priority;
    auto opened = Sink::open(*std::get<const audiod_module*>(loaded), host_, std::move(request));
    if (auto* error = std::get_if<std::string>(&opened)) {
        return *error;
    }
    SinkEntry entry;
    entry.sink = std::move(std::get<std::unique_ptr<Sink>>(opened));
    entry.is_default = config.name == config_.default_sink;
    sinks_.push_back(std::move(entry));
    return {};
}

void Engine::stop() {
    for (SinkEntry& entry : sinks_) {
        entry.sink->stop();
    }
    // No RT thread runs now, so every stream is ours alone.
    streams_.clear();
    pending_.clear();
    sinks_.clear();
}

Sink* Engine::find_sink(const std::string& name) const {
    for (const SinkEntry& entry : sinks_) {
        if (name.empty() ? entry.is_default : entry.sink->name() == name) {
            return entry.sink.get();
        }
    }
    return nullptr;
}

Stream* Engine::find_stream(uint32_t id) const {
    const auto it = streams_.find(id);
    return it == streams_.end() || it->second->detaching ? nullptr : it->second.get();
}

std::variant<Stream*, ClientError> Engine::create_stream(const StreamRequest& request) {
    const proto::CreateStream& p = request.params;
    Sink* sink = find_sink(p.sink);
    if (sink == nullptr) {
        return ClientError{AUDIOD_E_NOENTITY, "no sink named '" + p.sink + "'"};
    }
    if (sink->failed()) {
        return ClientError{AUDIOD_E_BUSY, "sink '" + sink->name() + "' has failed"};
    }
    const auto format = static_cast<SampleFormat>(p.format);
    if (!is_known_format(p.format)) {
        return ClientError{AUDIOD_E_INVALID, "unknown sample format " + std::to_string(p.format)};
    }
    if (format != SampleFormat::s16le && format != SampleFormat::f32le) {
        return ClientError{AUDIOD_E_NOTSUPPORTED, "sample format " +
                                                      std::string(format_name(format)) +
                                                      " is not supported yet (use s16le or f32le)"};
    }
    const SinkFormat& sf = sink->format();
    if (p.rate != sf.rate) {
        return ClientError{AUDIOD_E_NOTSUPPORTED, "rate " + std::to_string(p.rate) +
                                                      " Hz differs from sink '" + sink->name() +
                                                      "' at " + std::to_string(sf.rate) +
                                                      " Hz (resampling is not supported yet)"};
    }
    if (p.channels != sf.channels) {
        return ClientError{AUDIOD_E_NOTSUPPORTED,
                           std::to_string(p.channels) + " channels differ from sink '" +
                               sink->name() + "' with " + std::to_string(sf.channels) +
                               " (channel mapping is not supported yet)"};
    }
    if (!std::isfinite(p.volume) || p.volume < 0 || p.volume > kMaxGain) {
        return ClientError{AUDIOD_E_INVALID, "volume must be between 0 and 4"};
    }
    const size_t owned = std::count_if(streams_.begin(), streams_.end(), [&](const auto& entry) {
        return entry.second->client_id == request.client_id;
    });
    if (owned >= kMaxStreamsPerClient) {
        return ClientError{AUDIOD_E_REFUSED, "too many streams for one client"};
    }
    if (sink->attached_streams >= Sink::kMaxStreams) {
        return ClientError{AUDIOD_E_BUSY, "sink '" + sink->name() + "' has too many streams"};
    }

    // At least two quanta, so that the client can write one while we read one.
    const uint64_t wanted = p.buffer_frames == 0 ? sf.rate / 10 : p.buffer_frames;
    const uint64_t capacity = std::clamp<uint64_t>(wanted, 2 * uint64_t{sf.quantum}, 10 * sf.rate);

    const uint32_t id = next_stream_id_++;
    auto ring = StreamRing::create(id, format, p.rate, p.channels, capacity);
    if (auto* error = std::get_if<std::string>(&ring)) {
        log_error("engine", "cannot create stream ring: " + *error);
        return ClientError{AUDIOD_E_NOMEM, "cannot create the stream's buffer: " + *error};
    }
    UniqueFd wake(::eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC));
    if (!wake) {
        return ClientError{AUDIOD_E_SYSTEM, std::string("eventfd: ") + std::strerror(errno)};
    }
    auto stream = std::make_unique<Stream>(std::move(std::get<StreamRing>(ring)), std::move(wake));
    stream->id = id;
    stream->client_id = request.client_id;
    stream->pid = request.pid;
    stream->app = request.app;
    stream->sink = sink;
    stream->format = format;
    stream->rate = p.rate;
    stream->channels = p.channels;
    stream->volume = p.volume;
    stream->rt.gain.reset(stream->effective_gain());
    stream->ring.header()->sink_latency_frames.store(sink->latency_frames());

    if (!sink->send({RtCommand::Kind::attach, stream.get(), 1.0f})) {
        return ClientError{AUDIOD_E_BUSY, "sink '" + sink->name() + "' is not responding"};
    }
    ++sink->attached_streams;
    Stream* raw = stream.get();
    streams_.emplace(id, std::move(stream));
    log_info("engine", "stream created id=" + std::to_string(id) + " app=" + request.app +
                           " sink=" + sink->name() + " format=" + std::string(format_name(format)) +
                           " buffer=" + std::to_string(capacity));
    return raw;
}

void Engine::send_or_queue(Sink& sink, const RtCommand& command) {
    if (!pending_.empty() || !sink.send(command)) {
        // Keep order: once something is pending, everything queues behind it.
        pending_.emplace_back(&sink, command);
    }
}

void Engine::retry_pending() {
    size_t sent = 0;
    while (sent < pending_.size() && pending_[sent].first->send(pending_[sent].second)) {
        ++sent;
    }
    pending_.erase(pending_.begin(), pending_.begin() + static_cast<ptrdiff_t>(sent));
}

std::optional<ClientError> Engine::set_paused(Stream& stream, bool paused) {
    if (stream.paused == paused) {
        return std::nullopt;
    }
    stream.paused = paused;
    send_or_queue(*stream.sink,
                  {paused ? RtCommand::Kind::pause : RtCommand::Kind::resume, &stream, 1.0f});
    return std::nullopt;
}

void Engine::close_stream(Stream& stream) {
    if (stream.detaching) {
        return;
    }
    stream.detaching = true;
    if (stream.sink == nullptr || stream.sink->failed()) {
        release_stream(&stream);
        return;
    }
    send_or_queue(*stream.sink, {RtCommand::Kind::detach, &stream, 1.0f});
}

void Engine::release_stream(Stream* stream) {
    if (stream->sink != nullptr && stream->sink->attached_streams > 0) {
        --stream->sink->attached_streams;
    }
    log_info("engine", "stream closed id=" + std::to_string(stream->id) +
                           " underruns=" + std::to_string(stream->underruns.load()));
    streams_.erase(stream->id);
}

std::optional<ClientError> Engine::set_volume(const proto::SetVolume& request) {
    const auto apply = [&](float current) -> std::optional<float> {
        float next = current;
        switch (static_cast<proto::VolumeMode>(request.mode)) {
        case proto::VolumeMode::absolute:
            next = request.value;
            break;
        case proto::VolumeMode::relative_linear:
            next = current + request.value;
            break;
        case proto::VolumeMode::relative_db:
            next = current * std::pow(10.0f, request.value / 20.0f);
            break;
        default:
            return std::nullopt;
        }
        if (!std::isfinite(next)) {
            return std::nullopt;
        }
        return std::clamp(next, 0.0f, kMaxGain);
    };
    if (!std::isfinite(request.value)) {
        return ClientError{AUDIOD_E_INVALID, "volume is not a number"};
    }
    switch (static_cast<proto::VolumeTarget>(request.target)) {
    case proto::VolumeTarget::stream: {
        Stream* stream = find_stream(request.stream_id);
        if (stream == nullptr) {
            return ClientError{AUDIOD_E_NOENTITY,
                               "no stream with id " + std::to_string(request.stream_id)};
        }
        const auto next = apply(stream->volume);
        if (!next) {
            return ClientError{AUDIOD_E_INVALID, "invalid volume change"};
        }
        stream->volume = *next;
        send_or_queue(*stream->sink,
                      {RtCommand::Kind::stream_gain, stream, stream->effective_gain()});
        return std::nullopt;
    }
    case proto::VolumeTarget::sink: {
        Sink* sink = request.name.empty() ? nullptr : find_sink(request.name);
        if (sink == nullptr) {
            return ClientError{AUDIOD_E_NOENTITY, "no sink named '" + request.name + "'"};
        }
        const auto next = apply(sink->volume);
        if (!next) {
            return ClientError{AUDIOD_E_INVALID, "invalid volume change"};
        }
        sink->volume = *next;
        send_or_queue(*sink,
                      {RtCommand::Kind::sink_gain, nullptr, sink->muted ? 0.0f : sink->volume});
        return std::nullopt;
    }
    }
    return ClientError{AUDIOD_E_INVALID, "unknown volume target"};
}

std::vector<proto::SinkInfo> Engine::list_sinks() const {
    std::vector<proto::SinkInfo> out;
    for (const SinkEntry& entry : sinks_) {
        const Sink& sink = *entry.sink;
        proto::SinkInfo info;
        info.name = sink.name();
        info.type = sink.type();
        info.rate = sink.format().rate;
        info.channels = sink.format().channels;
        info.quantum = sink.format().quantum;
        info.format = static_cast<uint32_t>(sink.sample_format());
        info.volume = sink.volume;
        info.muted = sink.muted;
        info.is_default = entry.is_default;
        info.frames = sink.frames_played();
        info.xruns = sink.xruns();
        info.streams = static_cast<uint32_t>(sink.attached_streams);
        info.state = sink.failed() ? "failed" : "running";
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
        info.sink = stream->sink != nullptr ? stream->sink->name() : "";
        info.state = state_name(*stream);
        info.volume = stream->volume;
        info.muted = stream->muted;
        info.underruns = stream->underruns.load(std::memory_order_relaxed);
        info.format = static_cast<uint32_t>(stream->format);
        info.rate = stream->rate;
        info.channels = stream->channels;
        info.buffer_frames = stream->ring.capacity();
        info.position = stream->consumed.load(std::memory_order_relaxed);
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
    info.scheduling = sinks_.empty() ? "" : sinks_.front().sink->scheduling();
    info.default_sink = config_.default_sink;
    info.streams = static_cast<uint32_t>(list_streams().size());
    info.sinks = static_cast<uint32_t>(sinks_.size());
    return info;
}

std::vector<int> Engine::event_fds() const {
    std::vector<int> fds;
    for (const SinkEntry& entry : sinks_) {
        fds.push_back(entry.sink->event_fd());
    }
    return fds;
}

void Engine::handle_events(int fd) {
    for (SinkEntry& entry : sinks_) {
        Sink& sink = *entry.sink;
        if (sink.event_fd() != fd) {
            continue;
        }
        RtEvent events[64];
        size_t count = 0;
        do {
            count = sink.take_events(events, std::size(events));
            for (size_t i = 0; i < count; ++i) {
                const RtEvent& event = events[i];
                switch (event.kind) {
                case RtEvent::Kind::detached:
                    release_stream(event.stream);
                    break;
                case RtEvent::Kind::broken: {
                    Stream& stream = *event.stream;
                    const uint32_t client = stream.client_id;
                    log_warning("engine", "stream " + std::to_string(stream.id) +
                                              " corrupted its ring positions; dropping client " +
                                              std::to_string(client));
                    // The RT thread no longer mixes it, but commands for it
                    // may still sit in the queue: free it only on the
                    // `detached` that follows them.
                    close_stream(stream);
                    if (on_client_fault) {
                        on_client_fault(client, "corrupted its stream's ring positions");
                    }
                    break;
                }
                case RtEvent::Kind::sink_failed:
                    handle_sink_failure(sink, event.value);
                    break;
                }
            }
        } while (count == std::size(events));
        return;
    }
}

void Engine::handle_sink_failure(Sink& sink, int64_t error) {
    log_error("engine", "sink " + sink.name() +
                            " failed: " + std::strerror(static_cast<int>(-error)) +
                            "; its streams stay but are not played");
    // The RT thread has left its loop; joining it makes its streams ours.
    sink.stop();
    std::vector<Stream*> closing;
    for (auto& [id, stream] : streams_) {
        if (stream->sink == &sink && stream->detaching) {
            closing.push_back(stream.get());
        }
    }
    for (Stream* stream : closing) {
        release_stream(stream);
    }
    std::erase_if(pending_, [&](const auto& p) { return p.first == &sink; });
}

} // namespace audiod
