// Engine: sources played into sinks (engine/source_player.h) — the two
// streams a player carries audio between, made and closed here.
#include "engine/engine.h"

#include "audiod/audiod.h"
#include "log.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <unistd.h>

namespace audiod {

namespace {

// The longest queue a player may be asked to keep.
constexpr uint32_t kMaxPlayLatencyMs = 2000;

} // namespace

std::variant<Engine::PlayRequest, std::string>
Engine::take_play_request(std::vector<std::pair<std::string, std::string>>& options) {
    PlayRequest request;
    for (auto it = options.begin(); it != options.end();) {
        if (it->first == "sink") {
            if (it->second.empty()) {
                return std::string("sink = \"\": name the sink to play the source into");
            }
            request.sink = it->second;
            it = options.erase(it);
        } else {
            ++it;
        }
    }
    const auto latency = take_uint_option(options, "play-latency-ms",
                                          SourcePlayer::kDefaultLatencyMs, 1, kMaxPlayLatencyMs);
    if (const auto* error = std::get_if<std::string>(&latency)) {
        return *error;
    }
    request.latency_ms = std::get<uint32_t>(latency);
    return request;
}

Status Engine::play_source(Device& source, const PlayRequest& request) {
    if (find_sink(request.sink) == nullptr) {
        return Status::failure("sink = \"" + request.sink + "\": no sink has that name");
    }
    const DeviceFormat& format = source.format();
    const std::string app = source.type() + ":" + source.name();
    // What the user asked for, but at least what the devices take a cycle
    // (so that neither side's quantum alone can empty the queue) and the
    // clock loop's dead band (SourcePlayer: half of both quanta).
    uint32_t largest_quantum = 0;
    for (const DeviceEntry& entry : devices_) {
        const DeviceFormat& f = entry.device->format();
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
    recording.params.sink = source.name();
    recording.params.format = static_cast<uint32_t>(SampleFormat::f32le);
    recording.params.rate = format.rate;
    recording.params.channels = format.channels;
    recording.params.buffer_frames = std::max(format.rate / 5, 4 * format.quantum);
    recording.params.volume = 1.0f;
    auto recorded = create_stream(recording);
    if (auto* error = std::get_if<ClientError>(&recorded)) {
        return Status::failure("cannot record the source: " + error->message);
    }
    Stream& record = *std::get<Stream*>(recorded);
    record.pinned = true;

    // Where the user last moved it, if that sink is here; else as asked.
    StreamRequest playing = recording;
    playing.params.direction = static_cast<uint32_t>(proto::StreamDirection::playback);
    const std::string remembered = state_.get(app).sink;
    playing.params.sink =
        !remembered.empty() && find_sink(remembered) != nullptr ? remembered : request.sink;
    // Room for the queue to overfill before the player drops input.
    playing.params.buffer_frames = std::max(format.rate / 2, 6 * target);
    auto played = create_stream(playing);
    if (auto* error = std::get_if<ClientError>(&played)) {
        close_stream(record);
        return Status::failure("cannot play into sink '" + playing.params.sink +
                               "': " + error->message);
    }
    Stream& playback = *std::get<Stream*>(played);
    playback.wanted_sink = request.sink;
    auto player = SourcePlayer::start(source.name(), record, playback, target, format.quantum,
                                      largest_quantum, config_.rt_priority);
    if (player == nullptr) {
        close_stream(playback);
        close_stream(record);
        return Status::failure("cannot start the thread that plays it");
    }
    players_.push_back(std::move(player));
    log_info("engine", "source " + source.name() + " plays into " + playing.params.sink +
                           " stream=" + std::to_string(playback.id) +
                           " queue=" + std::to_string(target) + " frames");
    return Status::success();
}

void Engine::stop_playing(const std::string& source) {
    const auto it = std::find_if(players_.begin(), players_.end(),
                                 [&](const auto& player) { return player->name() == source; });
    if (it == players_.end()) {
        return;
    }
    Stream& record = (*it)->record();
    Stream& playback = (*it)->playback();
    players_.erase(it); // joins its thread: the streams are the engine's alone again
    close_stream(playback);
    close_stream(record);
}

const SourcePlayer* Engine::player_of(const Device& source) const {
    for (const auto& player : players_) {
        if (player->record().device == &source && player->name() == source.name()) {
            return player.get();
        }
    }
    return nullptr;
}

std::string Engine::player_details(const SourcePlayer& player) {
    const Stream& playback = player.playback();
    char queue_ms[32];
    std::snprintf(queue_ms, sizeof queue_ms, "%.1f", player.queued_frames() * 1000 / playback.rate);
    return "play-stream=" + std::to_string(playback.id) + "\nplay-sink=" + endpoint_name(playback) +
           "\nplay-target-ms=" + std::to_string(player.target_frames() * 1000 / playback.rate) +
           "\nplay-queue-ms=" + queue_ms +
           "\nplay-drift-ppm=" + std::to_string(std::lround((player.ratio() - 1) * 1e6)) +
           "\nplay-resyncs=" + std::to_string(player.resyncs()) +
           "\nplay-refills=" + std::to_string(player.refills()) +
           "\nplay-restarts=" + std::to_string(player.restarts()) + "\n";
}

} // namespace audiod
