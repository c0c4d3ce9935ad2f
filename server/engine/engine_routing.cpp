// Engine: sinks at run time, the default sink, moving streams between sinks,
// and rescuing the streams of a sink that goes away.
#include "engine/engine.h"
#include "engine/stream_conversion.h"

#include "audiod/audiod.h"
#include "log.h"

#include <algorithm>
#include <cstring>
#include <dirent.h>

namespace audiod {

namespace {

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

bool is_valid_sink_name(const std::string& name) {
    if (name.empty() || name.size() > 64) {
        return false;
    }
    return std::all_of(name.begin(), name.end(), [](char c) {
        return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
               c == '-' || c == '_' || c == '.';
    });
}

} // namespace

std::variant<uint32_t, std::string>
take_uint_option(std::vector<std::pair<std::string, std::string>>& options, const std::string& key,
                 uint32_t fallback, uint32_t min, uint32_t max) {
    uint32_t result = fallback;
    for (auto it = options.begin(); it != options.end();) {
        if (it->first != key) {
            ++it;
            continue;
        }
        char* end = nullptr;
        const unsigned long value = std::strtoul(it->second.c_str(), &end, 10);
        if (it->second.empty() || *end != '\0' || value < min || value > max) {
            return key + " = " + it->second + " is out of range (" + std::to_string(min) + ".." +
                   std::to_string(max) + ")";
        }
        result = static_cast<uint32_t>(value);
        it = options.erase(it);
    }
    return result;
}

std::variant<std::unique_ptr<Device>, std::string>
Engine::open_sink(const std::string& configured_type, const std::string& name,
                  std::vector<std::pair<std::string, std::string>> options, bool capture) {
    std::string type = configured_type;
    if (type == "auto") {
        // ALSA's default device where a sound card exists and the alsa module
        // is installed; otherwise a null sink keeps everything working.
        type = "null";
        if (sound_card_present()) {
            if (std::holds_alternative<const audiod_module*>(modules_.load("alsa"))) {
                type = "alsa";
                options.emplace_back("device", "default");
            } else {
                log_warning("engine", "a sound card exists but the alsa module is not installed; "
                                      "using a null sink");
            }
        }
        log_info("engine", "sink " + name + ": type auto resolved to " + type);
    }
    // Every sink may have its own quantum, rate and channel count.
    const auto quantum = take_uint_option(options, "quantum", config_.quantum, 16, 8192);
    const auto rate =
        take_uint_option(options, "rate", config_.rate, AUDIOD_MIN_RATE, AUDIOD_MAX_RATE);
    const auto channels =
        take_uint_option(options, "channels", config_.channels, 1, AUDIOD_MAX_CHANNELS);
    for (const auto* taken : {&quantum, &rate, &channels}) {
        if (const auto* error = std::get_if<std::string>(taken)) {
            return *error;
        }
    }
    const auto loaded = modules_.load(type);
    if (const auto* error = std::get_if<std::string>(&loaded)) {
        return *error;
    }
    DeviceRequest request;
    request.name = name;
    request.type = type;
    request.format = {std::get<uint32_t>(rate), std::get<uint32_t>(channels),
                      std::get<uint32_t>(quantum)};
    request.options = std::move(options);
    request.rt_priority = config_.rt_priority;
    request.kind = capture ? DeviceKind::source : DeviceKind::sink;
    auto opened = Device::open(*std::get<const audiod_module*>(loaded), host_, std::move(request));
    if (auto* error = std::get_if<std::string>(&opened)) {
        return *error;
    }
    auto& sink = std::get<std::unique_ptr<Device>>(opened);
    if (const Status started = sink->start(); !started.ok()) {
        return started.reason();
    }
    log_info("engine", "sink started name=" + name + " type=" + type +
                           " quantum=" + std::to_string(sink->format().quantum) + " scheduling=\"" +
                           sink->scheduling() + "\"");
    return std::move(sink);
}

void Engine::add_sink(std::unique_ptr<Device> sink, std::string configured_type,
                      std::vector<std::pair<std::string, std::string>> options) {
    Device& added = *sink;
    devices_.push_back(
        {std::move(sink), std::move(configured_type), std::move(options), {}, {}, {}});
    if (observer_ != nullptr) {
        observer_->on_device_opened(added);
    }
    proto::Event event;
    event.kind = "sink-added";
    event.sink = added.name();
    emit(event);
    bring_back_streams(added);
}

Device* Engine::find_sink(const std::string& name) const {
    for (const DeviceEntry& entry : devices_) {
        if (entry.device->name() == name && !entry.device->is_source()) {
            return entry.device.get();
        }
    }
    return nullptr;
}

Device* Engine::find_source(const std::string& name, std::string* wanted) const {
    *wanted = name;
    for (const DeviceEntry& entry : devices_) {
        if (entry.device->name() == name && entry.device->is_source()) {
            return entry.device.get();
        }
    }
    if (name.empty()) {
        return default_sink();
    }
    *wanted = monitored_sink(name);
    return wanted->empty() ? nullptr : find_sink(*wanted);
}

Device* Engine::default_sink() const {
    Device* chosen = find_sink(default_sink_);
    if (chosen != nullptr && !chosen->failed()) {
        return chosen;
    }
    for (const DeviceEntry& entry : devices_) {
        if (!entry.device->failed() && !entry.device->is_source()) {
            return entry.device.get();
        }
    }
    return nullptr;
}

Device* Engine::fallback_for(const Device& leaving) const {
    // A sink for playback streams; for record streams, its monitor.
    Device* preferred = default_sink();
    if (preferred != nullptr && preferred != &leaving) {
        return preferred;
    }
    for (const DeviceEntry& entry : devices_) {
        if (entry.device.get() != &leaving && !entry.device->failed() &&
            !entry.device->is_source()) {
            return entry.device.get();
        }
    }
    return nullptr;
}

MaybeError Engine::load_sink(const std::string& type, const std::string& name,
                             const std::vector<std::pair<std::string, std::string>>& options,
                             bool source) {
    const char* what = source ? "source" : "sink";
    if (!is_valid_sink_name(name)) {
        return ClientError{AUDIOD_E_INVALID, std::string("invalid ") + what + " name '" + name +
                                                 "' (use letters, digits, '-', '_' and '.')"};
    }
    if (find_sink(name) != nullptr) {
        return ClientError{AUDIOD_E_INVALID, "a sink named '" + name + "' already exists"};
    }
    std::string ignored;
    if (find_source(name, &ignored) != nullptr) {
        return ClientError{AUDIOD_E_INVALID, "a source named '" + name + "' already exists"};
    }
    if (devices_.size() >= kMaxSinks) {
        return ClientError{AUDIOD_E_BUSY, "too many sinks and sources"};
    }
    auto device_options = options;
    PlayRequest play;
    if (source) {
        auto taken = take_play_request(device_options);
        if (auto* error = std::get_if<std::string>(&taken)) {
            return ClientError{AUDIOD_E_INVALID, "cannot load source '" + name + "': " + *error};
        }
        play = std::get<PlayRequest>(taken);
        if (!play.sink.empty() && find_sink(play.sink) == nullptr) {
            return ClientError{AUDIOD_E_NOENTITY, "cannot load source '" + name +
                                                      "': no sink named '" + play.sink + "'"};
        }
    }
    auto opened = open_sink(type, name, device_options, source);
    if (auto* error = std::get_if<std::string>(&opened)) {
        return ClientError{AUDIOD_E_REFUSED,
                           std::string("cannot load ") + what + " '" + name + "': " + *error};
    }
    Device& added = *std::get<std::unique_ptr<Device>>(opened);
    const bool finds = source && finds_sources(device_options);
    add_sink(std::move(std::get<std::unique_ptr<Device>>(opened)), type, std::move(device_options));
    if (finds) {
        devices_.back().passes_on = play;
    } else if (!play.sink.empty()) {
        if (const Status playing = play_source(added, play); !playing.ok()) {
            log_error("engine",
                      "source " + name + " is loaded but does not play: " + playing.reason());
            return ClientError{AUDIOD_E_REFUSED,
                               "source '" + name +
                                   "' is loaded but does not play: " + playing.reason()};
        }
    }
    return std::nullopt;
}

MaybeError Engine::unload_sink(const std::string& name, bool source) {
    Device* sink = nullptr;
    if (source) {
        std::string wanted;
        sink = find_source(name, &wanted);
        if (sink == nullptr || !sink->is_source()) {
            return ClientError{AUDIOD_E_NOENTITY, "no source named '" + name + "'"};
        }
    } else {
        sink = find_sink(name);
        if (sink == nullptr) {
            return ClientError{AUDIOD_E_NOENTITY, "no sink named '" + name + "'"};
        }
    }
    if (source) {
        stop_playing(name);
        close_found_sources(name);
    }
    Device* fallback = fallback_for(*sink);
    if (fallback == nullptr && sink->attached_streams > 0) {
        return ClientError{AUDIOD_E_REFUSED,
                           "cannot unload '" + name + "': its streams have no other sink to go to"};
    }
    if (observer_ != nullptr) {
        observer_->on_device_closing(*sink);
    }
    // Stopping the RT thread first makes every stream on it ours alone, so
    // they can move without waiting for the sink to hand them back.
    sink->stop();
    rehome_streams(*sink);
    const bool was_default = default_sink_ == name;
    std::erase_if(devices_, [&](const DeviceEntry& entry) { return entry.device.get() == sink; });
    log_info("engine", std::string(source ? "source" : "sink") + " unloaded name=" + name);
    proto::Event removed;
    removed.kind = source ? "source-removed" : "sink-removed";
    removed.sink = name;
    emit(removed);
    if (was_default && fallback != nullptr) {
        change_default_sink(fallback->name());
    }
    return std::nullopt;
}

bool Engine::change_default_sink(const std::string& name) {
    if (default_sink_ == name) {
        return false;
    }
    proto::Event event;
    event.kind = "default-changed";
    event.sink = name;
    event.previous_sink = default_sink_;
    default_sink_ = name;
    emit(event);
    return true;
}

MaybeError Engine::set_default_sink(const std::string& name) {
    Device* sink = find_sink(name);
    if (sink == nullptr) {
        return ClientError{AUDIOD_E_NOENTITY, "no sink named '" + name + "'"};
    }
    if (sink->failed()) {
        return ClientError{AUDIOD_E_BUSY, "sink '" + name + "' has failed"};
    }
    state_.set_default_sink(name);
    change_default_sink(name);
    return std::nullopt;
}

MaybeError Engine::move(const proto::MoveStream& request) {
    // To a source ("SINK.monitor") moves record streams, to a sink playback.
    std::string wanted;
    Device* source = find_sink(request.sink) == nullptr && !request.sink.empty()
                         ? find_source(request.sink, &wanted)
                         : nullptr;
    const bool record = source != nullptr;
    Device* destination = record ? source : find_sink(request.sink);
    if (destination == nullptr) {
        return ClientError{AUDIOD_E_NOENTITY, "no sink or source named '" + request.sink + "'"};
    }
    if (destination->failed()) {
        return ClientError{AUDIOD_E_BUSY, "'" + request.sink + "' has failed"};
    }
    std::vector<Stream*> streams;
    if (static_cast<proto::VolumeTarget>(request.target) == proto::VolumeTarget::stream) {
        Stream* stream = find_stream(request.stream_id);
        if (stream == nullptr) {
            return ClientError{AUDIOD_E_NOENTITY,
                               "no stream with id " + std::to_string(request.stream_id)};
        }
        if (stream->record != record) {
            return ClientError{AUDIOD_E_INVALID,
                               record ? "a playback stream moves to a sink, not a source"
                                      : "a record stream moves to a source (SINK.monitor)"};
        }
        if (stream->pinned) {
            return ClientError{AUDIOD_E_REFUSED,
                               "stream " + std::to_string(stream->id) + " records source '" +
                                   stream->device->name() +
                                   "' for playing; move its playback stream instead"};
        }
        streams.push_back(stream);
    } else if (static_cast<proto::VolumeTarget>(request.target) == proto::VolumeTarget::app) {
        for (const auto& [id, stream] : streams_) {
            if (stream->app == request.app && !stream->detaching && stream->record == record &&
                !stream->pinned) {
                streams.push_back(stream.get());
            }
        }
        if (MaybeError error = check_app(request.app)) {
            return error;
        }
    } else {
        return ClientError{AUDIOD_E_INVALID, "a move needs a stream id or an application"};
    }
    for (Stream* stream : streams) {
        stream->wanted_sink = destination->name();
        stream->rescued_from.clear(); // the user chose: no going back by itself
        start_move(*stream, *destination);
    }
    if (record) {
        return std::nullopt; // a preferred source is not remembered (yet)
    }
    // The application will prefer this sink from now on, across restarts.
    const std::string app = streams.empty() ? request.app : streams.front()->app;
    AppSettings settings = state_.get(app);
    settings.sink = destination->name();
    if (const Status stored = state_.set(app, settings); !stored.ok()) {
        return ClientError{AUDIOD_E_REFUSED, stored.reason()};
    }
    return std::nullopt;
}

void Engine::start_move(Stream& stream, Device& destination) {
    if (stream.detaching || stream.destination() == &destination) {
        return;
    }
    const std::string previous = endpoint_name(stream);
    if (stream.moving_to != nullptr) {
        stream.moving_to = &destination; // still in transit: land elsewhere
    } else if (stream.device->failed()) {
        land(stream, destination); // no RT thread holds it
    } else {
        stream.moving_to = &destination;
        send_or_queue(*stream.device, {RtCommand::Kind::detach, &stream, 1.0f});
    }
    log_info("engine", "stream moving id=" + std::to_string(stream.id) + " from=" + previous +
                           " to=" + endpoint_name(stream));
    proto::Event event = stream_event("stream-moved", stream);
    event.previous_sink = previous;
    emit(event);
}

void Engine::land(Stream& stream, Device& destination) {
    if (stream.device->attached_streams > 0) {
        --stream.device->attached_streams;
    }
    stream.device = &destination;
    stream.moving_to = nullptr;
    if (stream.rescued_from == destination.name()) {
        stream.rescued_from.clear();
    }
    // What changed while no RT thread held the stream applies now.
    stream.rt.paused = stream.paused;
    if (stream.pending_flush != kNoFrame) {
        flush_stream(stream, stream.pending_flush);
        stream.pending_flush = kNoFrame;
    }
    const float gain = gain_command(stream).gain;
    if (stream.rt.started) {
        stream.rt.gain.set_target(gain, destination.ramp_frames());
    } else {
        stream.rt.gain.reset(gain);
    }
    if (const Status prepared = prepare_conversion(
            stream, destination.format(), destination.latency_frames(), config_.resample_quality);
        !prepared.ok()) {
        // Only memory for a resampler can run out here. prepare_conversion
        // has still set the format and channel conversion for this sink, so
        // the stream plays, at the wrong speed, until it moves again.
        log_error("engine", "stream " + std::to_string(stream.id) +
                                " plays unresampled: " + prepared.reason());
    }
    ++destination.attached_streams;
    send_or_queue(destination, {RtCommand::Kind::attach, &stream, 1.0f});
}

void Engine::rehome_streams(Device& leaving) {
    Device* fallback = fallback_for(leaving);
    std::erase_if(pending_, [&](const auto& entry) { return entry.first == &leaving; });
    std::vector<Stream*> closing;
    for (auto& [id, owned] : streams_) {
        Stream& stream = *owned;
        if (stream.moving_to == &leaving) {
            // On its way here: land somewhere that stays.
            stream.moving_to = fallback != nullptr ? fallback : stream.device;
        }
        if (stream.device != &leaving) {
            continue;
        }
        if (stream.detaching) {
            closing.push_back(&stream);
            continue;
        }
        if (stream.pinned) {
            continue; // a player's recording waits for its source to return
        }
        Device* destination = stream.moving_to != nullptr ? stream.moving_to : fallback;
        if (destination == nullptr) {
            continue; // nowhere to go: it waits, silent, for a sink to appear
        }
        const std::string previous = leaving.name();
        land(stream, *destination);
        stream.rescued_from = previous;
        log_info("engine", "stream rescued id=" + std::to_string(stream.id) + " from=" + previous +
                               " to=" + destination->name());
        proto::Event event = stream_event("stream-moved", stream);
        event.previous_sink = previous + (stream.record ? std::string(kMonitorSuffix) : "");
        emit(event);
    }
    for (Stream* stream : closing) {
        release_stream(*stream);
    }
}

void Engine::bring_back_streams(Device& arrived) {
    for (auto& [id, stream] : streams_) {
        const bool belongs =
            stream->wanted_sink == arrived.name() || stream->rescued_from == arrived.name();
        if (belongs && !stream->detaching && stream->destination() != &arrived) {
            start_move(*stream, arrived);
        }
    }
}

void Engine::reopen_failed_sinks() {
    const auto now = std::chrono::steady_clock::now();
    for (DeviceEntry& entry : devices_) {
        if (!entry.device->failed() || !entry.device->failure_announced ||
            now < entry.next_reopen) {
            continue;
        }
        if (entry.device->abandoned()) {
            if (!entry.device->rt_ended()) {
                continue; // reopened once its stuck call returns, not beside it
            }
            entry.device->release();
        }
        entry.next_reopen = now + kReopenInterval;
        const std::string name = entry.device->name();
        auto opened =
            open_sink(entry.configured_type, name, entry.options, entry.device->is_source());
        if (auto* error = std::get_if<std::string>(&opened)) {
            log_debug("engine", "sink " + name + " still unavailable: " + *error);
            continue;
        }
        swap_device(entry, std::move(std::get<std::unique_ptr<Device>>(opened)));
        log_info("engine", "sink " + name + " is back");
    }
}

void Engine::swap_device(DeviceEntry& entry, std::unique_ptr<Device> fresh) {
    if (observer_ != nullptr) {
        observer_->on_device_closing(*entry.device);
    }
    // Streams still on the old device (whose RT thread is gone: it failed,
    // or was stopped to be replaced) land on the new one before the old one
    // is freed.
    std::unique_ptr<Device> old = std::move(entry.device);
    entry.device = std::move(fresh);
    std::erase_if(pending_, [&](const auto& command) { return command.first == old.get(); });
    std::vector<Stream*> parked;
    for (auto& [id, stream] : streams_) {
        if (stream->device == old.get()) {
            parked.push_back(stream.get());
        }
        if (stream->moving_to == old.get()) {
            stream->moving_to = entry.device.get();
        }
    }
    for (Stream* stream : parked) {
        if (stream->detaching) {
            release_stream(*stream);
        } else {
            land(*stream, *entry.device);
        }
    }
    if (observer_ != nullptr) {
        observer_->on_device_opened(*entry.device);
    }
    proto::Event event;
    event.kind = "sink-changed";
    event.sink = entry.device->name();
    event.state = "running";
    emit(event);
    bring_back_streams(*entry.device);
}

void Engine::handle_sink_failure(Device& sink, int64_t error) {
    log_error("engine",
              "sink " + sink.name() + " failed: " + std::strerror(static_cast<int>(-error)));
    // The RT thread has left its loop; joining it makes its streams ours.
    // The device is closed now: the module may need it closed to find it
    // again when the server reopens it.
    sink.release();
    announce_failure(sink);
}

void Engine::announce_failure(Device& sink) {
    sink.failure_announced = true;
    rehome_streams(sink);
    proto::Event event;
    event.kind = "sink-changed";
    event.sink = sink.name();
    event.state = "failed";
    emit(event);
}

} // namespace audiod
