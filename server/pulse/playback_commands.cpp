// The pulse server's playback streams: CREATE_PLAYBACK_STREAM and the
// commands on a stream, the audio clients send, and what the RT thread's
// progress calls for (REQUEST, STARTED, UNDERFLOW, DRAIN's reply).
#include "engine/engine.h"
#include "log.h"
#include "pulse/engine_errors.h"
#include "pulse/pulse_server.h"
#include "pulse/sample_spec.h"
#include "pulse/server_facts.h"

#include <fcntl.h>
#include <memory>
#include <sys/epoll.h>
#include <sys/time.h>
#include <unistd.h>

namespace audiod::pulse {

PlaybackStream* PulseServer::playback_of(Connection& connection, uint32_t channel) {
    const auto it = connection.playbacks.find(channel);
    return it == connection.playbacks.end() ? nullptr : it->second.get();
}

bool PulseServer::on_playback_command(Connection& connection, Command command, uint32_t tag,
                                      TagReader& fields) {
    Session& session = *connection.session;
    if (command == Command::create_playback_stream) {
        create_playback(connection, tag, fields);
        return true;
    }
    const auto shape = stream_command_shape(command);
    if (!shape || shape->record) {
        return false;
    }
    std::optional<StreamCommandFields> f = read_stream_command(fields, shape->kind);
    if (!f) {
        session.reply_error(tag, Error::protocol);
        return true;
    }
    const uint32_t channel = f->channel;
    PlaybackStream* stream = playback_of(connection, channel);
    if (stream == nullptr) {
        session.reply_error(tag, Error::noentity);
        return true;
    }
    const uint32_t stream_id = stream->stream_id();
    switch (command) {
    case Command::delete_playback_stream:
        close_playback(connection, channel);
        session.reply(tag);
        break;
    case Command::drain_playback_stream:
        stream->drain(tag); // answered once heard (service)
        service(connection, *stream);
        break;
    case Command::cork_playback_stream:
        stream->set_corked(f->flag);
        pause_in_engine(stream_id, f->flag);
        session.reply(tag);
        break;
    case Command::flush_playback_stream: {
        const uint64_t position = stream->flush_position();
        post_job([stream_id, position](Engine& engine) -> EngineGateway::Answer {
            if (Stream* engine_stream = engine.find_stream(stream_id)) {
                (void)engine.flush(*engine_stream, position);
            }
            return {};
        });
        session.reply(tag);
        service(connection, *stream);
        break;
    }
    case Command::trigger_playback_stream:
        stream->trigger();
        session.reply(tag);
        break;
    case Command::prebuf_playback_stream:
        stream->prebuffer();
        session.reply(tag);
        break;
    case Command::get_playback_latency: {
        TagWriter w;
        w.put_usec(stream->sink_usec());
        w.put_usec(0);
        w.put_bool(stream->playing());
        w.put_timeval(f->sent);
        w.put_timeval(timeval_now());
        w.put_s64(stream->write_index());
        w.put_s64(stream->read_index());
        if (session.version() >= 13) {
            w.put_u64(stream->underrun_for());
            w.put_u64(stream->playing_for());
        }
        session.reply(tag, w);
        break;
    }
    case Command::update_playback_stream_proplist:
    case Command::set_playback_stream_name:
        if (!update_properties(stream->properties(), f->mode, std::move(f->properties))) {
            session.reply_error(tag, Error::invalid);
            break;
        }
        session.reply(tag);
        break;
    default: // remove_playback_stream_proplist
        for (const std::string& key : f->removed) {
            stream->properties().erase(key);
        }
        session.reply(tag);
        break;
    }
    return true;
}

void PulseServer::create_playback(Connection& connection, uint32_t tag, TagReader& fields) {
    Session& session = *connection.session;
    std::optional<PlaybackRequest> request = read_playback_request(fields, session.version());
    if (!request) {
        session.reply_error(tag, Error::protocol);
        return;
    }
    if (!settle_format(connection, tag, request->spec, request->map, request->formats)) {
        return;
    }
    if (request->sink_index != kInvalidIndex) {
        request->sink_name = sink_indices_.name(request->sink_index);
        if (!request->sink_name) {
            session.reply_error(tag, Error::noentity);
            return;
        }
    }
    StreamRequest made =
        engine_request(connection, request->spec, proto::StreamDirection::playback);
    made.params.volume = request->volume_set ? linear_gain(request->volume) : 1.0f;

    const uint32_t id = connection.id;
    auto asked = std::make_shared<const PlaybackRequest>(std::move(*request));
    post_job([this, id, tag, asked, made](Engine& engine) -> EngineGateway::Answer {
        auto playback = make_playback(engine, id, made, asked->spec, asked->attributes,
                                      asked->sink_name.value_or(""));
        if (const auto* error = std::get_if<Error>(&playback)) {
            return refuse_later(id, tag, *error);
        }
        const MadePlayback& made_playback = std::get<MadePlayback>(playback);
        Stream& stream = *made_playback.stream;
        const BufferAttributes attributes = made_playback.attributes;
        if (asked->corked) {
            (void)engine.set_paused(stream, true);
        }
        if (asked->muted_set && asked->muted) {
            proto::SetMute mute;
            mute.target = static_cast<uint32_t>(proto::VolumeTarget::stream);
            mute.stream_id = stream.id;
            mute.mode = static_cast<uint32_t>(proto::MuteMode::on);
            (void)engine.set_mute(mute);
        }
        auto ring =
            hand_over_ring(stream, stream.device()->name(), made_playback.sink_latency_usec);
        return [this, id, tag, asked, attributes, ring] {
            playback_made(id, tag, *asked, attributes, std::move(*ring));
        };
    });
}

void PulseServer::playback_made(uint32_t id, uint32_t tag, const PlaybackRequest& request,
                                const BufferAttributes& attributes, PlaybackStream::Made made) {
    const uint32_t stream_id = made.stream_id;
    Connection* connection = find(id);
    if (connection == nullptr) {
        end_stream(-1, stream_id); // the client left while the engine made it
        return;
    }
    const uint32_t channel = connection->next_channel++;
    auto stream = std::make_unique<PlaybackStream>(channel, request.spec, request.map, attributes,
                                                   request.early_requests);
    const uint64_t latency_usec = made.device_latency_usec;
    made.device_index = sink_indices_.index(made.device);
    const std::string not_bound = stream->bind(std::move(made));
    if (!watch_new_stream(id, tag, stream_id, not_bound, stream->wake_fd())) {
        return;
    }
    stream->set_corked(request.corked);
    stream->properties() = request.properties;
    woken_by_[stream_id] = {id, channel, false};
    Session& session = *connection->session;
    const BufferAttributes& a = stream->attributes();
    TagWriter w;
    w.put_u32(channel);
    w.put_u32(stream_id); // the sink input's index
    w.put_u32(stream->take_first_request());
    w.put_u32(a.maxlength);
    w.put_u32(a.tlength);
    w.put_u32(a.prebuf);
    w.put_u32(a.minreq);
    w.put_sample_spec(request.spec);
    w.put_channel_map(request.map);
    w.put_u32(stream->sink_index());
    w.put_string(stream->sink());
    w.put_bool(false); // suspended: a stream is never placed on a suspended sink
    w.put_usec(latency_usec);
    if (session.version() >= 21) {
        w.put_format_info(pcm_format_info(request.spec, request.map));
    }
    log_info("pulse",
             "stream " + std::to_string(stream_id) + " created app=\"" + engine_app(*connection) +
                 "\" sink=" + stream->sink() + " tlength=" + std::to_string(a.tlength) +
                 " minreq=" + std::to_string(a.minreq) + " prebuf=" + std::to_string(a.prebuf));
    connection->playbacks.emplace(channel, std::move(stream));
    with_connection(id, [&](Connection& c) { c.session->reply(tag, w); });
}

bool PulseServer::on_audio(Session& session, const Audio& audio) {
    Connection* connection = owner_of(session);
    if (connection == nullptr) {
        return false;
    }
    if (Upload* upload = upload_of(*connection, audio.channel)) {
        upload->append(audio.bytes);
        return true;
    }
    PlaybackStream* stream = playback_of(*connection, audio.channel);
    if (stream == nullptr) {
        // A stream this connection had (killed by the server, say) takes
        // what was on its way; a channel never given out is a broken client.
        return audio.channel < connection->next_channel;
    }
    const uint32_t mode = audio.flags & kSeekModeMask;
    if (mode > static_cast<uint32_t>(SeekMode::relative_end)) {
        return false;
    }
    if (!stream->write(audio.bytes, audio.offset, static_cast<SeekMode>(mode))) {
        session.send_command(Command::overflow, TagWriter().put_u32(stream->channel()));
    }
    service(*connection, *stream);
    return true;
}

void PulseServer::service(Connection& connection, PlaybackStream& stream) {
    Session& session = *connection.session;
    if (const uint32_t bytes = stream.take_request(); bytes > 0) {
        session.send_command(Command::request,
                             TagWriter().put_u32(stream.channel()).put_u32(bytes));
    }
    if (stream.take_started()) {
        session.send_command(Command::started, TagWriter().put_u32(stream.channel()));
    }
    if (stream.take_underflow()) {
        TagWriter w;
        w.put_u32(stream.channel());
        if (session.version() >= 23) {
            w.put_s64(stream.read_index());
        }
        session.send_command(Command::underflow, w);
    }
    for (const uint32_t tag : stream.drained(PlaybackStream::Clock::now())) {
        session.reply(tag);
    }
}

void PulseServer::on_stream_wake(uint32_t stream_id) {
    const auto it = woken_by_.find(stream_id);
    if (it == woken_by_.end()) {
        return;
    }
    const Woken woken = it->second;
    uint64_t count = 0;
    if (woken.connection == kNoConnection) {
        if (const auto player = sample_players_.find(stream_id); player != sample_players_.end()) {
            [[maybe_unused]] const ssize_t r =
                ::read(player->second.stream->wake_fd(), &count, sizeof count);
            feed_sample(stream_id);
        }
        return;
    }
    Connection* connection = find(woken.connection);
    if (connection == nullptr) {
        return;
    }
    if (woken.record) {
        if (RecordStream* stream = record_of(*connection, woken.channel)) {
            [[maybe_unused]] const ssize_t r = ::read(stream->wake_fd(), &count, sizeof count);
            with_connection(woken.connection, [&](Connection& c) { pump_records(c); });
        }
        return;
    }
    if (PlaybackStream* stream = playback_of(*connection, woken.channel)) {
        [[maybe_unused]] const ssize_t r = ::read(stream->wake_fd(), &count, sizeof count);
        with_connection(woken.connection, [&](Connection& c) { service(c, *stream); });
    }
}

void PulseServer::service_drains() {
    const auto now = PlaybackStream::Clock::now();
    std::vector<uint32_t> due;
    for (const auto& [id, connection] : connections_) {
        for (const auto& [channel, stream] : connection->playbacks) {
            if (const auto at = stream->next_deadline(); at && *at <= now) {
                due.push_back(id);
                break;
            }
        }
    }
    for (const uint32_t id : due) {
        with_connection(id, [&](Connection& c) {
            for (const auto& [channel, stream] : c.playbacks) {
                service(c, *stream);
            }
        });
    }
    std::vector<uint32_t> samples_due;
    for (const auto& [stream_id, player] : sample_players_) {
        if (const auto at = player.stream->next_deadline(); at && *at <= now) {
            samples_due.push_back(stream_id);
        }
    }
    for (const uint32_t stream_id : samples_due) {
        feed_sample(stream_id);
    }
}

int PulseServer::next_timeout_ms() const {
    const auto now = PlaybackStream::Clock::now();
    auto wait = std::chrono::milliseconds(kLookMs);
    const auto wait_for = [&](const PlaybackStream& stream) {
        if (const auto at = stream.next_deadline()) {
            const auto until = std::chrono::ceil<std::chrono::milliseconds>(*at - now);
            wait = std::clamp(until, std::chrono::milliseconds(1), wait);
        }
    };
    for (const auto& [id, connection] : connections_) {
        for (const auto& [channel, stream] : connection->playbacks) {
            wait_for(*stream);
        }
    }
    for (const auto& [stream_id, player] : sample_players_) {
        wait_for(*player.stream);
    }
    return static_cast<int>(wait.count());
}

void PulseServer::close_playback(Connection& connection, uint32_t channel) {
    PlaybackStream* stream = playback_of(connection, channel);
    if (stream == nullptr) {
        return;
    }
    const uint32_t stream_id = stream->stream_id();
    end_stream(stream->wake_fd(), stream_id);
    connection.playbacks.erase(channel);
}

} // namespace audiod::pulse
