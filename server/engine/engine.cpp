// Engine: start and stop, the stream lifecycle, and the plumbing to the RT
// threads (command queue with retry, RT events).
#include "engine/engine.h"
#include "engine/stream_conversion.h"

#include "audiod/audiod.h"
#include "log.h"
#include "os/watchdog.h"
#include "protocol/ring_layout.h"

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstring>
#include <map>
#include <sys/eventfd.h>

namespace audiod {

namespace {

int64_t unix_now() {
    return std::chrono::duration_cast<std::chrono::seconds>(
               std::chrono::system_clock::now().time_since_epoch())
        .count();
}

// "4000 ms", for the watchdog's messages.
std::string ms_text(std::chrono::steady_clock::duration duration) {
    return std::to_string(std::chrono::duration_cast<std::chrono::milliseconds>(duration).count()) +
           " ms";
}

void host_log(int level, const char* component, const char* message) {
    log_message(static_cast<LogLevel>(std::clamp(level, 0, 3)), component ? component : "module",
                message ? message : "");
}

} // namespace

Engine::Engine(ServerConfig config, ModuleLoader& modules, AppStateStore& state)
    : config_(std::move(config))
    , modules_(modules)
    , state_(state) {
    host_.abi_version = AUDIOD_MODULE_ABI_VERSION;
    host_.log = host_log;
    host_.request_source = request_source;
    host_.server = this;
    take_app_rules();
}

void Engine::take_app_rules() {
    std::map<std::string, AppSettings> rules;
    for (const AppRule& rule : config_.apps) {
        rules[rule.app] = {rule.volume.value_or(1.0f), rule.muted.value_or(false), rule.sink};
    }
    state_.set_rules(std::move(rules));
}

Engine::~Engine() {
    stop();
}

Status Engine::start() {
    for (const SinkConfig& sink : config_.sinks) {
        auto opened = open_sink(sink.type, sink.name, sink.options);
        if (auto* error = std::get_if<std::string>(&opened)) {
            return Status::failure("sink '" + sink.name + "': " + *error);
        }
        add_sink(std::move(std::get<std::unique_ptr<Device>>(opened)), sink.type, sink.options);
    }
    std::vector<std::pair<Device*, PlayRequest>> to_play;
    for (const SinkConfig& source : config_.sources) {
        auto options = source.options;
        auto play = take_play_request(options);
        if (auto* error = std::get_if<std::string>(&play)) {
            return Status::failure("source '" + source.name + "': " + *error);
        }
        auto opened = open_sink(source.type, source.name, options, true);
        if (auto* error = std::get_if<std::string>(&opened)) {
            return Status::failure("source '" + source.name + "': " + *error);
        }
        Device& added = *std::get<std::unique_ptr<Device>>(opened);
        const bool finds = finds_sources(options);
        add_sink(std::move(std::get<std::unique_ptr<Device>>(opened)), source.type,
                 std::move(options));
        if (finds) {
            devices_.back().passes_on = std::get<PlayRequest>(play);
        } else if (!std::get<PlayRequest>(play).sink.empty()) {
            to_play.emplace_back(&added, std::get<PlayRequest>(play));
        }
    }
    default_sink_ = config_.default_sink;
    // A default chosen at run time (set-default-sink) outlives restarts.
    if (!state_.default_sink().empty() && find_sink(state_.default_sink()) != nullptr) {
        default_sink_ = state_.default_sink();
    }
    for (const auto& [source, request] : to_play) {
        if (const Status playing = play_source(*source, request); !playing.ok()) {
            return Status::failure("source '" + source->name() + "': " + playing.reason());
        }
    }
    started_at_ = std::chrono::steady_clock::now();
    return Status::success();
}

void Engine::stop() {
    // Players first: their threads use streams that are about to go.
    players_.clear();
    for (DeviceEntry& entry : devices_) {
        entry.device->stop();
    }
    // No RT thread runs now, so every stream is ours alone.
    streams_.clear();
    pending_.clear();
    devices_.clear();
    if (std::optional<std::string> text = state_.take_all_text()) {
        state_writer_.submit(state_.path(), std::move(*text));
    }
    if (!state_writer_.flush(StateFileWriter::kStopWait)) {
        log_error("engine", "the state file " + state_.path() + " is still being written after " +
                                std::to_string(StateFileWriter::kStopWait.count()) +
                                " s (a slow disk); stopping without waiting for it");
    } else if (const std::string failure = state_writer_.take_failure(); !failure.empty()) {
        log_error("engine", failure);
    }
}

Stream* Engine::find_stream(uint32_t id) const {
    const auto it = streams_.find(id);
    return it == streams_.end() || it->second->detaching ? nullptr : it->second.get();
}

std::variant<Stream*, ClientError> Engine::create_stream(const StreamRequest& request) {
    const proto::CreateStream& p = request.params;
    const AppSettings app = state_.get(request.app);
    const bool record = p.direction == static_cast<uint32_t>(proto::StreamDirection::record);
    if (p.direction > 1) {
        return ClientError{AUDIOD_E_INVALID, "unknown stream direction"};
    }
    // An explicit sink must exist; a remembered one is used when it does.
    // A record stream names a source: "SINK.monitor", or "" for the
    // default sink's.
    Device* sink = nullptr;
    std::string wanted = p.sink;
    std::string returns_to;
    if (record) {
        sink = find_source(p.sink, &wanted);
        if (sink == nullptr && !p.sink.empty()) {
            return ClientError{AUDIOD_E_NOENTITY, "no source named '" + p.sink + "'"};
        }
    } else if (!p.sink.empty()) {
        sink = find_sink(p.sink);
        if (sink == nullptr) {
            return ClientError{AUDIOD_E_NOENTITY, "no sink named '" + p.sink + "'"};
        }
    } else {
        // The application's remembered sink where it exists, else the
        // default; either may have failed, as below.
        wanted = app.sink;
        sink = app.sink.empty() ? nullptr : find_sink(app.sink);
        if (sink == nullptr) {
            sink = find_sink(default_sink_);
        }
        if (sink == nullptr) {
            sink = default_sink();
        }
    }
    // A sink or source that has failed (its device gone, being reopened),
    // asked for by name or where the stream would have played: the stream
    // plays, or records, where the failure moved the others, and goes there
    // when it comes back, as they do. A sink or source the watchdog finds
    // stalled is passed over the same way where another can play or be
    // recorded: a client whose stream stalled creates it anew, and must not
    // land where it stalled.
    if (sink != nullptr && sink->failed()) {
        returns_to = sink->name();
        sink = default_sink();
    } else if (sink != nullptr && sink->progress.stalled) {
        if (Device* elsewhere = fallback_for(*sink); elsewhere != nullptr) {
            returns_to = sink->name();
            sink = elsewhere;
        }
    }
    if (sink == nullptr) {
        return ClientError{AUDIOD_E_NOENTITY, "no sink is available"};
    }
    const auto format = static_cast<SampleFormat>(p.format);
    if (!is_known_format(p.format)) {
        return ClientError{AUDIOD_E_INVALID, "unknown sample format " + std::to_string(p.format)};
    }
    if (format == SampleFormat::invalid) {
        return ClientError{AUDIOD_E_INVALID, "sample format must not be 'invalid'"};
    }
    if (p.rate < AUDIOD_MIN_RATE || p.rate > AUDIOD_MAX_RATE) {
        return ClientError{AUDIOD_E_NOTSUPPORTED, "rate " + std::to_string(p.rate) +
                                                      " Hz is outside " +
                                                      std::to_string(AUDIOD_MIN_RATE) + ".." +
                                                      std::to_string(AUDIOD_MAX_RATE) + " Hz"};
    }
    if (p.channels < 1 || p.channels > kMaxChannels) {
        return ClientError{AUDIOD_E_NOTSUPPORTED, std::to_string(p.channels) +
                                                      " channels: between 1 and " +
                                                      std::to_string(kMaxChannels) + " please"};
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
    if (sink->attached_streams >= Device::kMaxStreams) {
        return ClientError{AUDIOD_E_BUSY, "sink '" + sink->name() + "' has too many streams"};
    }

    // At least two of the largest cycle's worth of the stream's frames, so
    // that the client can write one while we read one, wherever it moves.
    uint64_t largest_cycle = 0;
    for (const DeviceEntry& entry : devices_) {
        const DeviceFormat& f = entry.device->format();
        largest_cycle =
            std::max<uint64_t>(largest_cycle, (uint64_t{f.quantum} * p.rate + f.rate - 1) / f.rate);
    }
    const uint64_t wanted_frames = p.buffer_frames == 0 ? p.rate / 10 : p.buffer_frames;
    const uint64_t capacity =
        std::clamp<uint64_t>(wanted_frames, 2 * (largest_cycle + 4), 10 * uint64_t{p.rate});

    // Shared memory is the server's to give: one client may not take more
    // than its share, however many streams it asks for.
    size_t in_use = 0;
    for (const auto& [other_id, other] : streams_) {
        if (other->client_id == request.client_id && !other->detaching) {
            in_use += other->ring.memory_bytes();
        }
    }
    const uint64_t asked = ring_memory_bytes(capacity, p.channels * sample_bytes(format));
    const uint64_t limit = uint64_t{config_.client_memory_mb} << 20;
    if (request.client_id != 0 && in_use + asked > limit) {
        const auto mb = [](uint64_t bytes) { return std::to_string((bytes + (1 << 19)) >> 20); };
        return ClientError{AUDIOD_E_REFUSED,
                           "a stream of " + mb(asked) +
                               " MB would take this client past its shared-memory limit (" +
                               mb(in_use) + " MB in use of " +
                               std::to_string(config_.client_memory_mb) +
                               " MB; [server] client-memory-mb)"};
    }

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
    Stream& s = *stream;
    s.id = id;
    s.client_id = request.client_id;
    s.pid = request.pid;
    s.app = request.app;
    state_.mark_seen(s.app, unix_now());
    s.device = sink;
    s.wanted_sink = wanted;
    s.rescued_from = returns_to;
    s.format = format;
    s.rate = p.rate;
    s.channels = p.channels;
    s.record = record;
    s.volume = p.volume;
    // The application's remembered volume and mute apply from the first frame.
    s.rt.gain.reset(gain_command(s).gain);
    if (const Status prepared =
            prepare_conversion(s, sink->format(), sink->latency_frames(), config_.resample_quality);
        !prepared.ok()) {
        return ClientError{AUDIOD_E_NOMEM, prepared.reason()};
    }

    if (!sink->send({RtCommand::Kind::attach, &s, 1.0f})) {
        return ClientError{AUDIOD_E_BUSY, "sink '" + sink->name() + "' is not responding"};
    }
    ++sink->attached_streams;
    streams_.emplace(id, std::move(stream));
    log_info("engine", "stream created id=" + std::to_string(id) + " app=" + request.app +
                           (record ? " source=" : " sink=") + endpoint_name(s) +
                           " format=" + std::string(format_name(format)) +
                           " buffer=" + std::to_string(capacity));
    emit(stream_event("stream-added", s));
    return &s;
}

MaybeError Engine::set_paused(Stream& stream, bool paused) {
    if (stream.paused == paused) {
        return std::nullopt;
    }
    stream.paused = paused;
    if (!stream.in_transit()) {
        send_or_queue(*stream.device,
                      {paused ? RtCommand::Kind::pause : RtCommand::Kind::resume, &stream, 1.0f});
    }
    emit(stream_event("stream-changed", stream));
    return std::nullopt;
}

MaybeError Engine::flush(Stream& stream, uint64_t position) {
    if (stream.record) {
        return ClientError{AUDIOD_E_BADSTATE, "stream " + std::to_string(stream.id) +
                                                  " records; only a playback stream is flushed"};
    }
    if (stream.detaching) {
        return std::nullopt; // closing: nothing will play anyway
    }
    if (stream.moving_to != nullptr) {
        stream.pending_flush = position; // applied when it lands
    } else if (stream.device->failed()) {
        flush_stream(stream, position); // no RT thread holds it
    } else {
        send_or_queue(*stream.device, {RtCommand::Kind::flush, &stream, 1.0f, position});
    }
    return std::nullopt;
}

void Engine::close_stream(Stream& stream) {
    if (stream.detaching) {
        return;
    }
    const bool moving = stream.moving_to != nullptr;
    stream.detaching = true;
    state_.mark_seen(stream.app, unix_now());
    stream.moving_to = nullptr;
    if (moving) {
        return; // the detach for the move is on its way; its event frees it
    }
    if (stream.device->failed()) {
        release_stream(stream);
        return;
    }
    send_or_queue(*stream.device, {RtCommand::Kind::detach, &stream, 1.0f});
}

void Engine::release_stream(Stream& stream) {
    if (stream.device->attached_streams > 0) {
        --stream.device->attached_streams;
    }
    log_info("engine", "stream closed id=" + std::to_string(stream.id) +
                           " underruns=" + std::to_string(stream.xruns.load()));
    emit(stream_event("stream-removed", stream));
    streams_.erase(stream.id);
}

RtCommand Engine::gain_command(Stream& stream) const {
    if (stream.record) {
        // A recording's level is its own: application and sink volumes are
        // about what is played.
        return {RtCommand::Kind::stream_gain, &stream, stream.muted ? 0.0f : stream.volume};
    }
    const AppSettings app = state_.get(stream.app);
    const bool silent = stream.muted || app.muted;
    return {RtCommand::Kind::stream_gain, &stream, silent ? 0.0f : stream.volume * app.volume};
}

void Engine::send_or_queue(Device& sink, const RtCommand& command) {
    // Keep order: once something is pending, everything queues behind it.
    if (!pending_.empty() || !sink.send(command)) {
        pending_.emplace_back(&sink, command);
    }
}

void Engine::tick() {
    size_t sent = 0;
    while (sent < pending_.size() && pending_[sent].first->send(pending_[sent].second)) {
        ++sent;
    }
    pending_.erase(pending_.begin(), pending_.begin() + static_cast<ptrdiff_t>(sent));
    watch_rt_threads();
    reopen_failed_sinks();
    handle_source_requests();
    report_state_changes();
    save_state();
}

void Engine::save_state() {
    if (const std::string failure = state_writer_.take_failure(); !failure.empty()) {
        log_warning("engine", failure);
        state_.mark_dirty(); // taken again below
    }
    if (std::optional<std::string> text = state_.take_text()) {
        state_writer_.submit(state_.path(), std::move(*text));
    }
}

void Engine::handle_events(int fd) {
    Device* sink = nullptr;
    for (const DeviceEntry& entry : devices_) {
        if (entry.device->event_fd() == fd) {
            sink = entry.device.get();
        }
    }
    if (sink == nullptr) {
        return;
    }
    RtEvent events[64];
    size_t count = 0;
    do {
        count = sink->take_events(events, std::size(events));
        for (size_t i = 0; i < count; ++i) {
            const RtEvent& event = events[i];
            switch (event.kind) {
            case RtEvent::Kind::detached: {
                Stream& stream = *event.stream;
                if (stream.detaching) {
                    release_stream(stream);
                } else if (stream.moving_to != nullptr) {
                    land(stream, *stream.moving_to);
                }
                break;
            }
            case RtEvent::Kind::broken: {
                Stream& stream = *event.stream;
                const uint32_t client = stream.client_id;
                log_warning("engine", "stream " + std::to_string(stream.id) +
                                          " corrupted its ring positions; dropping client " +
                                          std::to_string(client));
                // The RT thread no longer mixes it, but commands for it may
                // still sit in the queue: free it only on the `detached`
                // that follows them.
                close_stream(stream);
                if (observer_ != nullptr) {
                    observer_->on_client_fault(client, "corrupted its stream's ring positions");
                }
                break;
            }
            case RtEvent::Kind::device_failed:
                handle_sink_failure(*sink, event.value);
                return; // the sink's streams have moved; its queue is done
            }
        }
    } while (count == std::size(events));
}

void Engine::watch_rt_threads() {
    const auto now = std::chrono::steady_clock::now();
    if (const uint64_t demotions = rt_time_demotions(); demotions != rt_time_demotions_seen_) {
        rt_time_demotions_seen_ = demotions;
        log_error("watchdog", "RLIMIT_RTTIME: a real-time thread ran too long without "
                              "blocking; all RT threads were demoted to SCHED_OTHER");
        for (DeviceEntry& entry : devices_) {
            entry.device->demote("RLIMIT_RTTIME");
        }
    }
    // A sink's silence counts only over time this thread saw pass (from its
    // first look on). Held itself, it cannot tell a stuck RT thread from one
    // held alike and not yet run again: after an 8 s SIGSTOP, a first look
    // that came before the sinks' first cycles found them stalled and gave
    // them up, and a stream made anew for the null sink of a test landed on
    // its file sink, mixed into the signal the test checks.
    const bool held = now - last_rt_watch_ > kWatchdogHeldAfter;
    last_rt_watch_ = now;
    for (DeviceEntry& entry : devices_) {
        Device& sink = *entry.device;
        Device::Progress& progress = sink.progress;
        const uint64_t frames = sink.frames_played();
        if (frames != progress.frames || sink.failed() || sink.rt_tid() == 0) {
            const bool recovered = progress.stalled && !sink.failed();
            progress = {frames, now, false};
            if (recovered) {
                log_info("watchdog", "sink " + sink.name() + " completes cycles again");
                proto::Event event;
                event.kind = "sink-changed";
                event.sink = sink.name();
                event.state = "running";
                emit(event);
                bring_back_streams(sink); // those created elsewhere while it stalled
            }
            continue;
        }
        if (held) {
            progress.since = now;
            continue;
        }
        if (!progress.stalled && now - progress.since >= kRtWatchdogTimeout) {
            progress.stalled = true;
            const bool was_realtime = is_realtime(sink.rt_tid());
            const std::string limit = ms_text(kRtWatchdogTimeout);
            sink.demote("no cycle completed for " + limit);
            log_error("watchdog", "sink " + sink.name() +
                                      ": the RT thread completed no cycle for " + limit +
                                      (was_realtime ? "; demoted to SCHED_OTHER" : ""));
            proto::Event event;
            event.kind = "sink-changed";
            event.sink = sink.name();
            event.state = "stalled";
            emit(event);
        }
        if (progress.stalled && now - progress.since >= kRtAbandonTimeout && sink.abandon()) {
            log_error("watchdog",
                      "sink " + sink.name() + ": the RT thread has been inside a call into the " +
                          sink.type() + " module for " + ms_text(kRtAbandonTimeout) +
                          "; given up: the sink fails, its streams move to another sink, "
                          "and it is reopened once that call returns");
            announce_failure(sink);
        }
    }
}

void Engine::emit(proto::Event event) const {
    if (observer_ != nullptr) {
        observer_->on_event(event);
    }
}

proto::Event Engine::stream_event(const char* kind, const Stream& stream) const {
    proto::Event event;
    event.kind = kind;
    event.stream_id = stream.id;
    event.app = stream.app;
    event.sink = endpoint_name(stream);
    event.state = stream.reported_state;
    event.volume = stream.volume;
    event.muted = stream.muted;
    return event;
}

std::string endpoint_name(const Stream& stream) {
    const Device& at = *stream.destination();
    return at.name() + (stream.record && !at.is_source() ? std::string(kMonitorSuffix) : "");
}

std::string monitored_sink(const std::string& source) {
    const std::string_view suffix = kMonitorSuffix;
    if (source.size() > suffix.size() && source.ends_with(suffix)) {
        return source.substr(0, source.size() - suffix.size());
    }
    return "";
}

} // namespace audiod
