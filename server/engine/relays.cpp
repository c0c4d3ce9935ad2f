#include "engine/relays.h"

#include "engine/announcer.h"
#include "engine/engine.h"

#include "log.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <unistd.h>

namespace audiod {

Relays::Relays(Engine& engine, const DeviceRegistry& devices, const AppStateStore& state,
               const ServerConfig& config)
    : engine_(engine)
    , devices_(devices)
    , state_(state)
    , config_(config) {}

Status Relays::start(Device& source, const RelayRequest& request) {
    if (devices_.find_sink(request.sink) == nullptr) {
        return Status::failure("sink = \"" + request.sink + "\": no sink has that name");
    }
    const bool replay = request.replayed_after_ns > 0;
    const DeviceFormat& format = source.format();
    // A replay's streams are named for the group and the member, so that
    // each member's level is its own (and remembered as an application's).
    const std::string app = replay ? "group:" + source.name() + "@" + request.sink
                                   : source.type() + ":" + source.name();
    // What the user asked for, but at least what the devices take a cycle
    // (so that neither side's quantum alone can empty the queue) and the
    // clock loop's dead band (SourceRelay: half of both quanta).
    uint32_t largest_quantum = 0;
    for (const auto& entry : devices_.entries()) {
        const DeviceFormat& f = entry->device->format();
        largest_quantum = std::max<uint32_t>(
            largest_quantum, static_cast<uint32_t>(uint64_t{f.quantum} * format.rate / f.rate));
    }
    const uint32_t target = std::max<uint32_t>(
        static_cast<uint32_t>(uint64_t{request.latency_ms} * format.rate / 1000),
        format.quantum + 2 * largest_quantum + (format.quantum + largest_quantum) / 2);

    StreamRequest recording;
    recording.pid = static_cast<uint32_t>(::getpid());
    recording.app = app;
    recording.params.direction = static_cast<uint32_t>(proto::StreamDirection::record);
    recording.params.device = replay ? source.name() + ".monitor" : source.name();
    recording.params.format = static_cast<uint32_t>(SampleFormat::f32le);
    recording.params.rate = format.rate;
    recording.params.channels = format.channels;
    recording.params.buffer_frames = std::max(format.rate / 5, 4 * format.quantum);
    recording.params.volume = 1.0f;
    auto recorded = engine_.create_stream(recording);
    if (auto* error = std::get_if<ClientError>(&recorded)) {
        return Status::failure("cannot record the source: " + error->message);
    }
    Stream& record = *std::get<Stream*>(recorded);
    record.placement.pinned = true;
    // A timed source's times reach the relay; a replayed monitor's are the
    // sink's, later by the replay's delay.
    record.replayed_after_ns.store(request.replayed_after_ns, std::memory_order_relaxed);
    record.anchored.store(true, std::memory_order_relaxed);

    // Where the user last moved it, if that sink is here; else as asked.
    StreamRequest playing = recording;
    playing.params.direction = static_cast<uint32_t>(proto::StreamDirection::playback);
    const std::string remembered = replay ? std::string() : state_.get(app).sink;
    playing.params.device = !remembered.empty() && devices_.find_sink(remembered) != nullptr
                                ? remembered
                                : request.sink;
    playing.params.volume = request.volume.value_or(1.0f);
    // Room for the queue to overfill before the relay drops input, and
    // for a timed source's frames to wait until they are due (a link
    // offset of up to about 2 s).
    playing.params.buffer_frames = std::max(format.rate * 2, 6 * target);
    auto played = engine_.create_stream(playing);
    if (auto* error = std::get_if<ClientError>(&played)) {
        engine_.close_stream(record);
        return Status::failure("cannot play into sink '" + playing.params.device +
                               "': " + error->message);
    }
    Stream& playback = *std::get<Stream*>(played);
    playback.anchored.store(true, std::memory_order_relaxed); // when its sink plays it
    playback.placement.home = request.sink;
    // A member plays the group on its own sink or not at all: rescued to
    // the default sink it could be playing into the group itself.
    playback.placement.pinned = replay;
    if (request.muted.value_or(false)) {
        (void)engine_.set_mute({static_cast<uint32_t>(proto::VolumeTarget::stream), playback.id, "",
                                static_cast<uint32_t>(proto::MuteMode::on)});
    }
    const std::string name = replay ? replay_name(source.name(), request.sink) : source.name();
    auto relay = SourceRelay::start(name, record, playback, target, format.quantum, largest_quantum,
                                    config_.rt_priority);
    if (relay == nullptr) {
        engine_.close_stream(playback);
        engine_.close_stream(record);
        return Status::failure("cannot start the thread that plays it");
    }
    relays_.push_back(std::move(relay));
    log_info("engine", std::string(replay ? "group " : "source ") + source.name() + " plays into " +
                           playing.params.device + " stream=" + std::to_string(playback.id) +
                           " queue=" + std::to_string(target) + " frames");
    return Status::success();
}

void Relays::stop(const std::string& name) {
    const auto it = std::find_if(relays_.begin(), relays_.end(),
                                 [&](const auto& relay) { return relay->name() == name; });
    if (it == relays_.end()) {
        return;
    }
    Stream& record = (*it)->record();
    Stream& playback = (*it)->playback();
    relays_.erase(it); // joins its thread: the streams are the engine's alone again
    engine_.close_stream(playback);
    engine_.close_stream(record);
}

void Relays::stop_replays_on(const Device& sink) {
    std::vector<std::string> names;
    for (const auto& relay : relays_) {
        const bool replay = relay->playback().placement.pinned;
        if (replay && (relay->record().device() == &sink || relay->playback().device() == &sink)) {
            names.push_back(relay->name());
        }
    }
    for (const std::string& name : names) {
        stop(name);
    }
}

void Relays::tell_sources() const {
    for (const auto& relay : relays_) {
        Device* source = relay->record().device();
        if (source != nullptr && source->is_source()) {
            source->tell_playout(
                {relay->timed() ? 1 : 0, relay->sync_error_us(), relay->realigns()});
        }
    }
}

const SourceRelay* Relays::find(const std::string& name) const {
    for (const auto& relay : relays_) {
        if (relay->name() == name) {
            return relay.get();
        }
    }
    return nullptr;
}

const SourceRelay* Relays::of(const Device& source) const {
    for (const auto& relay : relays_) {
        if (relay->record().device() == &source && relay->name() == source.name()) {
            return relay.get();
        }
    }
    return nullptr;
}

std::string Relays::details(const SourceRelay& relay) {
    const Stream& playback = relay.playback();
    char queue_ms[32];
    std::snprintf(queue_ms, sizeof queue_ms, "%.1f", relay.queued_frames() * 1000 / playback.rate);
    return "play-stream=" + std::to_string(playback.id) + "\nplay-sink=" + endpoint_name(playback) +
           "\nplay-target-ms=" + std::to_string(relay.target_frames() * 1000 / playback.rate) +
           "\nplay-queue-ms=" + queue_ms +
           "\nplay-drift-ppm=" + std::to_string(std::lround((relay.ratio() - 1) * 1e6)) +
           "\nplay-resyncs=" + std::to_string(relay.resyncs()) +
           "\nplay-refills=" + std::to_string(relay.refills()) +
           "\nplay-restarts=" + std::to_string(relay.restarts()) + "\n" + timing(relay);
}

std::string Relays::timing(const SourceRelay& relay) {
    if (!relay.timed()) {
        return "play-timed=no\n";
    }
    char error_us[32];
    std::snprintf(error_us, sizeof error_us, "%.1f", relay.sync_error_us());
    return "play-timed=yes\nplay-sync-error-us=" + std::string(error_us) +
           "\nplay-realigns=" + std::to_string(relay.realigns()) + "\n";
}

} // namespace audiod
