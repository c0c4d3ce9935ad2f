// The pulse server's sample cache (sample_cache.h): uploads
// (CREATE_UPLOAD_STREAM, its audio, FINISH_UPLOAD_STREAM), PLAY_SAMPLE,
// REMOVE_SAMPLE and the samples' introspection. A sample plays as an
// engine stream of the client that asked for it, fed by this thread from
// the cache, and plays to its end even if that client has gone (pactl
// play-sample leaves at once).
#include "engine/engine.h"
#include "log.h"
#include "pulse/engine_errors.h"
#include "pulse/pulse_server.h"
#include "pulse/sample_spec.h"

#include <algorithm>

namespace audiod::pulse {

namespace {

// A sample's stream queues at most this much of it at a time.
constexpr uint64_t kSampleQueueUsec = 500000;

} // namespace

Upload* PulseServer::upload_of(Connection& connection, uint32_t channel) {
    const auto it = connection.uploads.find(channel);
    return it == connection.uploads.end() ? nullptr : &it->second;
}

bool PulseServer::on_sample_command(Connection& connection, Command command, uint32_t tag,
                                    TagReader& fields) {
    Session& session = *connection.session;
    const uint32_t version = session.version();
    uint32_t index = kInvalidIndex;
    std::optional<std::string> name;
    switch (command) {
    case Command::create_upload_stream: {
        Upload upload;
        std::string upload_name;
        fields.get_string(upload_name);
        fields.get_sample_spec(upload.spec);
        fields.get_channel_map(upload.map);
        fields.get_u32(upload.length);
        if (version >= 13) {
            fields.get_proplist(upload.properties);
        }
        if (!fields.done() || upload_name.empty()) {
            session.reply_error(tag, fields.done() ? Error::invalid : Error::protocol);
            return true;
        }
        upload.name = std::move(upload_name);
        start_upload(connection, tag, std::move(upload));
        return true;
    }
    case Command::delete_upload_stream:
    case Command::finish_upload_stream: {
        uint32_t channel = 0;
        if (!fields.get_u32(channel) || !fields.done()) {
            session.reply_error(tag, Error::protocol);
            return true;
        }
        Upload* upload = upload_of(connection, channel);
        if (upload == nullptr) {
            session.reply_error(tag, Error::noentity);
            return true;
        }
        if (command == Command::finish_upload_stream) {
            finish_upload(connection, tag, std::move(*upload));
        } else {
            session.reply(tag);
        }
        connection.uploads.erase(channel);
        return true;
    }
    case Command::play_sample: {
        uint32_t sink_index = kInvalidIndex;
        std::optional<std::string> sink_name;
        uint32_t volume = kInvalidIndex;
        std::string sample_name;
        PropertyList properties;
        fields.get_u32(sink_index);
        fields.get_string(sink_name);
        fields.get_u32(volume);
        fields.get_string(sample_name);
        if (version >= 13) {
            fields.get_proplist(properties);
        }
        if (!fields.done()) {
            session.reply_error(tag, Error::protocol);
            return true;
        }
        if (sink_index != kInvalidIndex) {
            sink_name = sink_indices_.name(sink_index);
            if (!sink_name) {
                session.reply_error(tag, Error::noentity);
                return true;
            }
        }
        play_sample(connection, tag, sample_name, sink_name.value_or(""), volume);
        return true;
    }
    case Command::remove_sample: {
        std::string sample_name;
        if (!fields.get_string(sample_name) || !fields.done()) {
            session.reply_error(tag, Error::protocol);
            return true;
        }
        const auto removed = samples_.remove(shelf_of(connection), sample_name);
        if (!removed) {
            session.reply_error(tag, Error::noentity);
            return true;
        }
        session.reply(tag);
        notify(SubscriptionEvent{Facility::sample_cache, Happened::removed, *removed});
        return true;
    }
    case Command::get_sample_info:
        fields.get_u32(index);
        fields.get_string(name);
        break;
    case Command::get_sample_info_list:
        break;
    default:
        return false;
    }
    if (!fields.done()) {
        session.reply_error(tag, Error::protocol);
        return true;
    }
    TagWriter w;
    if (command == Command::get_sample_info) {
        const uint32_t shelf = shelf_of(connection);
        const Sample* sample = index != kInvalidIndex ? samples_.find(shelf, index)
                               : name                 ? samples_.find(shelf, *name)
                                                      : nullptr;
        if (sample == nullptr) {
            session.reply_error(tag, Error::noentity);
            return true;
        }
        put_sample_info(w, *sample, version);
    } else {
        for (const Sample* sample : samples_.on_shelf(shelf_of(connection))) {
            put_sample_info(w, *sample, version);
        }
    }
    session.reply(tag, w);
    return true;
}

void PulseServer::start_upload(Connection& connection, uint32_t tag, Upload upload) {
    Session& session = *connection.session;
    if (const std::string why = unplayable(upload.spec); !why.empty()) {
        session.reply_error(tag, Error::notsupported);
        return;
    }
    const uint32_t frame = frame_bytes(upload.spec);
    if (upload.map.positions.size() != upload.spec.channels || upload.length % frame != 0) {
        session.reply_error(tag, Error::invalid);
        return;
    }
    uint64_t pending = 0;
    for (const auto& [channel, waiting] : connection.uploads) {
        pending += waiting.length;
    }
    if (const std::string why = samples_.may_upload(connection.id, pending, upload.length);
        !why.empty()) {
        log_info("pulse", "client " + std::to_string(connection.id) + ": sample '" + upload.name +
                              "' refused: " + why);
        session.reply_error(tag, Error::toolarge);
        return;
    }
    const uint32_t channel = connection.next_channel++;
    const uint32_t length = upload.length;
    upload.audio.reserve(length);
    connection.uploads.emplace(channel, std::move(upload));
    session.reply(tag, TagWriter().put_u32(channel).put_u32(length));
}

void PulseServer::finish_upload(Connection& connection, uint32_t tag, Upload upload) {
    Session& session = *connection.session;
    const uint32_t frame = frame_bytes(upload.spec);
    if (upload.audio.empty() || upload.audio.size() % frame != 0) {
        session.reply_error(tag, Error::invalid); // nothing came, or half a frame
        return;
    }
    const uint32_t shelf = shelf_of(connection);
    const bool replaces = samples_.find(shelf, upload.name) != nullptr;
    const auto index = samples_.add(std::move(upload), connection.id, shelf);
    if (!index) {
        session.reply_error(tag, Error::toolarge);
        return;
    }
    session.reply(tag);
    notify(SubscriptionEvent{Facility::sample_cache, replaces ? Happened::changed : Happened::added,
                             *index});
}

void PulseServer::play_sample(Connection& connection, uint32_t tag, const std::string& name,
                              const std::string& sink_name, uint32_t volume) {
    const Sample* sample = samples_.find(shelf_of(connection), name);
    if (sample == nullptr) {
        connection.session->reply_error(tag, Error::noentity);
        return;
    }
    StreamRequest made = engine_request(connection, sample->spec, proto::StreamDirection::playback);
    if (volume != kInvalidIndex) { // PA_VOLUME_INVALID: the sample's own
        made.params.volume = linear_gain(ChannelVolumes{{volume}});
    }
    const uint32_t bytes = frame_bytes(sample->spec);
    BufferAttributes asked;
    asked.tlength = static_cast<uint32_t>(std::min<uint64_t>(
        sample->audio->size(), usec_to_bytes(kSampleQueueUsec, bytes, sample->spec.rate)));
    const uint32_t id = connection.id;
    const SampleSpec spec = sample->spec;
    const ChannelMap map = sample->map;
    const auto audio = sample->audio;
    post_job([this, id, tag, made, asked, spec, map, audio,
              sink_name](Engine& engine) -> EngineGateway::Answer {
        auto playback = make_playback(engine, id, made, spec, asked, sink_name);
        if (const auto* error = std::get_if<Error>(&playback)) {
            return refuse_later(id, tag, *error);
        }
        const MadePlayback& made_playback = std::get<MadePlayback>(playback);
        const BufferAttributes attributes = made_playback.attributes;
        Stream& stream = *made_playback.stream;
        auto ring =
            hand_over_ring(stream, stream.device()->name(), made_playback.sink_latency_usec);
        return [this, id, tag, spec, map, attributes, audio, ring] {
            sample_playing(id, tag, spec, map, attributes, audio, std::move(*ring));
        };
    });
}

void PulseServer::sample_playing(uint32_t id, uint32_t tag, const SampleSpec& spec,
                                 const ChannelMap& map, const BufferAttributes& attributes,
                                 std::shared_ptr<const std::vector<uint8_t>> audio,
                                 EngineRing made) {
    const uint32_t stream_id = made.stream_id;
    SamplePlayer player;
    player.stream = std::make_unique<PlaybackStream>(kInvalidIndex, spec, map, attributes);
    player.audio = std::move(audio);
    made.device_index = sink_indices_.index(made.device);
    const std::string not_bound = player.stream->bind(std::move(made));
    if (!watch_new_stream(id, tag, stream_id, not_bound, player.stream->wake_fd())) {
        return;
    }
    woken_by_[stream_id] = {kNoConnection, 0, false};
    player.room = player.stream->take_first_request();
    sample_players_.emplace(stream_id, std::move(player));
    feed_sample(stream_id);
    with_connection(id, [&](Connection& c) {
        TagWriter w;
        if (c.session->version() >= 13) {
            w.put_u32(stream_id); // the sink input's index
        }
        c.session->reply(tag, w);
    });
}

void PulseServer::feed_sample(uint32_t stream_id) {
    const auto it = sample_players_.find(stream_id);
    if (it == sample_players_.end()) {
        return;
    }
    SamplePlayer& player = it->second;
    PlaybackStream& stream = *player.stream;
    player.room += stream.take_request();
    const size_t left = player.audio->size() - player.written;
    const size_t now = std::min<size_t>(left, player.room);
    if (now > 0) {
        stream.write(std::span(*player.audio).subspan(player.written, now), 0, SeekMode::relative);
        player.written += now;
        player.room -= now;
    }
    if (player.written == player.audio->size() && !player.draining) {
        player.draining = true;
        stream.drain(0); // plays what is queued, however little
    }
    if (player.draining && !stream.drained(PlaybackStream::Clock::now()).empty()) {
        end_stream(stream.wake_fd(), stream_id);
        sample_players_.erase(it);
    }
}

} // namespace audiod::pulse
