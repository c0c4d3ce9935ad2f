// The pulse server's record streams: CREATE_RECORD_STREAM and the commands
// on a record stream, and sending what the source captured.
#include "engine/engine.h"
#include "log.h"
#include "pulse/engine_errors.h"
#include "pulse/introspection.h"
#include "pulse/pulse_server.h"
#include "pulse/sample_spec.h"
#include "pulse/server_facts.h"

#include <fcntl.h>
#include <sys/epoll.h>
#include <sys/time.h>
#include <unistd.h>

namespace audiod::pulse {

namespace {

// What may wait in a connection's socket queue before its record streams
// stop sending (and their rings fill, and then overrun): far below the
// queue at which a client that does not read is dropped.
constexpr size_t kRecordBacklogBytes = 1u << 20;

// A source's latency: a monitor's is its sink's (buffer and a cycle), a
// capture device's its own buffer.
uint64_t source_latency_usec(const EngineSnapshot& snapshot, uint32_t index) {
    const proto::SourceInfo& source = snapshot.sources[index];
    for (const proto::SinkInfo& sink : snapshot.sinks) {
        if (source.type == "monitor" && sink.name == source.sink && sink.rate > 0) {
            return (uint64_t{sink.latency_frames} + sink.quantum) * 1000000 / sink.rate;
        }
    }
    return source.rate > 0 ? uint64_t{source.latency_frames} * 1000000 / source.rate : 0;
}

} // namespace

RecordStream* PulseServer::record_of(Connection& connection, uint32_t channel) {
    const auto it = connection.records.find(channel);
    return it == connection.records.end() ? nullptr : it->second.get();
}

bool PulseServer::on_record_command(Connection& connection, Command command, uint32_t tag,
                                    TagReader& fields) {
    Session& session = *connection.session;
    if (command == Command::create_record_stream) {
        create_record(connection, tag, fields);
        return true;
    }
    const auto shape = stream_command_shape(command);
    if (!shape || !shape->record) {
        return false;
    }
    std::optional<StreamCommandFields> f = read_stream_command(fields, shape->kind);
    if (!f) {
        session.reply_error(tag, Error::protocol);
        return true;
    }
    const uint32_t channel = f->channel;
    RecordStream* stream = record_of(connection, channel);
    if (stream == nullptr) {
        session.reply_error(tag, Error::noentity);
        return true;
    }
    const uint32_t stream_id = stream->stream_id();
    switch (command) {
    case Command::delete_record_stream:
        close_record(connection, channel);
        session.reply(tag);
        break;
    case Command::cork_record_stream:
        stream->set_corked(f->flag);
        pause_in_engine(stream_id, f->flag);
        session.reply(tag);
        break;
    case Command::flush_record_stream:
        stream->flush();
        session.reply(tag);
        break;
    case Command::get_record_latency: {
        TagWriter w;
        w.put_usec(0); // the source's latency: its audio is in the ring as captured
        w.put_usec(0);
        w.put_bool(!stream->corked());
        w.put_timeval(f->sent);
        w.put_timeval(timeval_now());
        w.put_s64(stream->write_index());
        w.put_s64(stream->read_index());
        session.reply(tag, w);
        break;
    }
    case Command::remove_record_stream_proplist:
        for (const std::string& key : f->removed) {
            stream->properties().erase(key);
        }
        session.reply(tag);
        break;
    default: // update_record_stream_proplist, set_record_stream_name
        if (!update_properties(stream->properties(), f->mode, std::move(f->properties))) {
            session.reply_error(tag, Error::invalid);
            break;
        }
        session.reply(tag);
        break;
    }
    return true;
}

void PulseServer::create_record(Connection& connection, uint32_t tag, TagReader& fields) {
    Session& session = *connection.session;
    std::optional<RecordRequest> request = read_record_request(fields, session.version());
    if (!request) {
        session.reply_error(tag, Error::protocol);
        return;
    }
    if (!settle_format(connection, tag, request->spec, request->map, request->formats)) {
        return;
    }
    if (request->source_index != kInvalidIndex) {
        request->source_name = source_indices_.name(request->source_index);
        if (!request->source_name) {
            session.reply_error(tag, Error::noentity);
            return;
        }
    }
    StreamRequest made = engine_request(connection, request->spec, proto::StreamDirection::record);
    const uint32_t bytes = frame_bytes(request->spec);
    const BufferAttributes attributes =
        record_attributes(request->attributes, bytes, request->spec.rate);
    // Room for two fragments, and a quarter of a second at least: what the
    // source puts in while this thread sends.
    made.params.buffer_frames = std::max(2 * attributes.fragsize / bytes, request->spec.rate / 4);

    const uint32_t id = connection.id;
    auto asked = std::make_shared<const RecordRequest>(std::move(*request));
    post_job(
        [this, id, tag, asked, attributes, made](Engine& engine) mutable -> EngineGateway::Answer {
            EngineSnapshot snapshot;
            snapshot.sinks = engine.list_sinks();
            snapshot.sources = engine.list_sources();
            snapshot.default_sink = engine.info().default_sink;
            snapshot.default_source = engine.default_source();
            const auto source = find_source(snapshot, kInvalidIndex, asked->source_name);
            if (!source) {
                return refuse_later(id, tag, Error::noentity);
            }
            made.params.device = snapshot.sources[*source].name;
            auto created = engine.create_stream(made);
            if (const auto* error = std::get_if<ClientError>(&created)) {
                log_info("pulse", "client " + std::to_string(id) + ": " + error->message);
                return refuse_later(id, tag, pulse_error(error->code));
            }
            Stream& stream = *std::get<Stream*>(created);
            if (asked->corked) {
                (void)engine.set_paused(stream, true);
            }
            auto ring = hand_over_ring(stream, snapshot.sources[*source].name,
                                       source_latency_usec(snapshot, *source));
            return [this, id, tag, asked, attributes, ring] {
                record_made(id, tag, *asked, attributes, std::move(*ring));
            };
        });
}

void PulseServer::record_made(uint32_t id, uint32_t tag, const RecordRequest& request,
                              const BufferAttributes& attributes, EngineRing made) {
    const uint32_t stream_id = made.stream_id;
    Connection* connection = find(id);
    if (connection == nullptr) {
        end_stream(-1, stream_id); // the client left while the engine made it
        return;
    }
    const uint32_t channel = connection->next_record_channel++;
    auto stream = std::make_unique<RecordStream>(channel, request.spec, request.map, attributes);
    const uint64_t latency_usec = made.device_latency_usec;
    made.device_index = source_indices_.index(made.device);
    const std::string not_bound = stream->bind(std::move(made));
    if (!watch_new_stream(id, tag, stream_id, not_bound, stream->wake_fd())) {
        return;
    }
    stream->set_corked(request.corked);
    stream->properties() = request.properties;
    woken_by_[stream_id] = {id, channel, true};
    Session& session = *connection->session;
    const BufferAttributes& a = stream->attributes();
    TagWriter w;
    w.put_u32(channel);
    w.put_u32(stream_id); // the source output's index
    w.put_u32(a.maxlength);
    w.put_u32(a.fragsize);
    w.put_sample_spec(request.spec);
    w.put_channel_map(request.map);
    w.put_u32(stream->source_index());
    w.put_string(stream->source());
    w.put_bool(false); // suspended: nor recorded from a suspended source
    w.put_usec(latency_usec);
    if (session.version() >= 22) {
        w.put_format_info(pcm_format_info(request.spec, request.map));
    }
    log_info("pulse", "stream " + std::to_string(stream_id) + " created app=\"" +
                          engine_app(*connection) + "\" source=" + stream->source() +
                          " fragsize=" + std::to_string(a.fragsize));
    connection->records.emplace(channel, std::move(stream));
    with_connection(id, [&](Connection& c) { c.session->reply(tag, w); });
}

void PulseServer::pump_records(Connection& connection) {
    Session& session = *connection.session;
    for (const auto& [channel, stream] : connection.records) {
        while ((connection.queued.size() - connection.sent) + session.output_bytes() <
               kRecordBacklogBytes) {
            const std::vector<uint8_t> chunk = stream->take_chunk();
            if (chunk.empty()) {
                break;
            }
            session.send_audio(channel, chunk);
        }
    }
}

void PulseServer::close_record(Connection& connection, uint32_t channel) {
    RecordStream* stream = record_of(connection, channel);
    if (stream == nullptr) {
        return;
    }
    const uint32_t stream_id = stream->stream_id();
    end_stream(stream->wake_fd(), stream_id);
    connection.records.erase(channel);
}

} // namespace audiod::pulse
