// The pulse server's introspection: GET_*_INFO and their lists, LOOKUP_*,
// STAT and GET_SERVER_INFO, answered from a snapshot the control thread
// takes of the engine, and from what this thread knows of its clients.
#include "engine/engine.h"
#include "pulse/introspection.h"
#include "pulse/pulse_server.h"
#include "pulse/sample_spec.h"

#include <algorithm>

namespace audiod::pulse {

namespace {

EngineSnapshot snapshot_of(const Engine& engine) {
    EngineSnapshot snapshot;
    snapshot.sinks = engine.list_sinks();
    snapshot.sources = engine.list_sources();
    snapshot.streams = engine.list_streams();
    snapshot.default_sink = engine.info().default_sink;
    snapshot.default_source = engine.default_source();
    snapshot.pulse_client_base = PulseServer::kClientIdBase;
    return snapshot;
}

EngineFacts facts_of(const Engine& engine, const EngineSnapshot& snapshot) {
    EngineFacts facts;
    facts.rate = engine.config().rate;
    facts.channels = engine.config().channels;
    facts.default_sink = snapshot.default_sink;
    facts.default_source = default_source(snapshot);
    return facts;
}

bool is_record(const proto::StreamInfo& stream) {
    return stream.direction == static_cast<uint32_t>(proto::StreamDirection::record);
}

} // namespace

bool PulseServer::on_introspection_command(Connection& connection, Command command, uint32_t tag,
                                           TagReader& fields) {
    uint32_t index = kInvalidIndex;
    std::optional<std::string> name;
    switch (command) {
    case Command::get_sink_info:
    case Command::get_source_info:
    case Command::get_card_info:
        fields.get_u32(index);
        fields.get_string(name);
        break;
    case Command::get_sink_input_info:
    case Command::get_source_output_info:
    case Command::get_client_info:
        fields.get_u32(index);
        break;
    case Command::lookup_sink:
    case Command::lookup_source: {
        std::string wanted;
        fields.get_string(wanted);
        name = wanted;
        break;
    }
    case Command::get_server_info:
    case Command::get_sink_info_list:
    case Command::get_source_info_list:
    case Command::get_sink_input_info_list:
    case Command::get_source_output_info_list:
    case Command::get_client_info_list:
    case Command::get_card_info_list:
    case Command::stat:
        break;
    default:
        return false;
    }
    Session& session = *connection.session;
    if (!fields.done()) {
        session.reply_error(tag, Error::protocol);
        return true;
    }
    switch (command) {
    case Command::get_card_info:
        // audiod has no cards in PulseAudio's sense.
        session.reply_error(tag, Error::noentity);
        return true;
    case Command::get_card_info_list:
        session.reply(tag);
        return true;
    case Command::stat: {
        TagWriter w; // no memory blocks: audio travels through the socket
        w.put_u32(0).put_u32(0).put_u32(0).put_u32(0).put_u32(0);
        session.reply(tag, w);
        return true;
    }
    default:
        break;
    }
    const uint32_t id = connection.id;
    const uint32_t cookie = cookie_;
    post_job([this, id, tag, command, index, name, cookie](Engine& engine) {
        auto snapshot = std::make_shared<EngineSnapshot>(snapshot_of(engine));
        const EngineFacts facts = facts_of(engine, *snapshot);
        return EngineGateway::Answer(
            [this, id, tag, command, index, name, cookie, snapshot, facts] {
                number(*snapshot, sink_indices_, source_indices_);
                for (const auto& [at, module] : modules_.all()) {
                    snapshot->module_sinks[module.sink] = {at, module.description};
                }
                with_connection(id, [&](Connection& c) {
                    show_streams(policy_, caller_of(c), snapshot->streams);
                    answer_introspection(c, tag, command, index, name, *snapshot, facts, cookie);
                });
            });
    });
    return true;
}

void PulseServer::answer_introspection(Connection& connection, uint32_t tag, Command command,
                                       uint32_t index, const std::optional<std::string>& name,
                                       const EngineSnapshot& snapshot, const EngineFacts& facts,
                                       uint32_t cookie) {
    Session& session = *connection.session;
    const uint32_t version = session.version();
    TagWriter w;
    const auto pulse_facts = [&](const proto::StreamInfo& stream) -> const PulseStreamFacts* {
        return stream_facts(stream.id);
    };
    switch (command) {
    case Command::get_server_info:
        session.reply(tag, server_info(facts, version, cookie));
        return;
    case Command::lookup_sink:
    case Command::lookup_source: {
        const auto found = command == Command::lookup_sink
                               ? find_sink(snapshot, kInvalidIndex, name)
                               : find_source(snapshot, kInvalidIndex, name);
        if (!found) {
            session.reply_error(tag, Error::noentity);
            return;
        }
        session.reply(tag, TagWriter().put_u32(*found));
        return;
    }
    case Command::get_sink_info:
    case Command::get_source_info: {
        const bool sink = command == Command::get_sink_info;
        const auto found =
            sink ? find_sink(snapshot, index, name) : find_source(snapshot, index, name);
        if (!found) {
            session.reply_error(tag, Error::noentity);
            return;
        }
        sink ? put_sink(w, snapshot, *found, version) : put_source(w, snapshot, *found, version);
        break;
    }
    case Command::get_sink_info_list:
        for (uint32_t i = 0; i < snapshot.sinks.size(); ++i) {
            put_sink(w, snapshot, i, version);
        }
        break;
    case Command::get_source_info_list:
        for (uint32_t i = 0; i < snapshot.sources.size(); ++i) {
            put_source(w, snapshot, i, version);
        }
        break;
    case Command::get_sink_input_info:
    case Command::get_source_output_info:
    case Command::get_sink_input_info_list:
    case Command::get_source_output_info_list: {
        const bool record = command == Command::get_source_output_info ||
                            command == Command::get_source_output_info_list;
        const bool one =
            command == Command::get_sink_input_info || command == Command::get_source_output_info;
        bool found = false;
        for (const proto::StreamInfo& stream : snapshot.streams) {
            if (is_record(stream) != record || (one && stream.id != index)) {
                continue;
            }
            found = true;
            record ? put_source_output(w, snapshot, stream, pulse_facts(stream), version)
                   : put_sink_input(w, snapshot, stream, pulse_facts(stream), version);
        }
        if (one && !found) {
            session.reply_error(tag, Error::noentity);
            return;
        }
        break;
    }
    case Command::get_client_info:
    case Command::get_client_info_list: {
        const bool one = command == Command::get_client_info;
        bool found = false;
        for (const auto& [client_id, client] : connections_) {
            if ((one && client_id != index) || !sees(connection, *client)) {
                continue;
            }
            found = true;
            put_client(w, client_id,
                       shown_app(policy_, caller_of(connection), engine_app(*client))
                           .value_or(declared_app(*client)),
                       client->session->client_properties(), version);
        }
        // libaudiod's clients, as their streams show them.
        std::vector<uint32_t> native;
        for (const proto::StreamInfo& stream : snapshot.streams) {
            const uint32_t client = pulse_client_of(stream.client_id, kClientIdBase);
            if (client < kNativeClientBase || client == kInvalidIndex ||
                std::find(native.begin(), native.end(), client) != native.end() ||
                (one && client != index)) {
                continue;
            }
            native.push_back(client);
            found = true;
            PropertyList properties;
            set_property(properties, "application.name", stream.app);
            set_property(properties, "application.process.id", std::to_string(stream.pid));
            put_client(w, client, stream.app, properties, version);
        }
        if (one && !found) {
            session.reply_error(tag, Error::noentity);
            return;
        }
        break;
    }
    default:
        session.reply_error(tag, Error::notimplemented);
        return;
    }
    session.reply(tag, w);
}

const PulseStreamFacts* PulseServer::stream_facts(uint32_t stream_id) {
    const auto it = woken_by_.find(stream_id);
    if (it == woken_by_.end()) {
        return nullptr;
    }
    Connection* connection = find(it->second.connection);
    if (connection == nullptr) {
        return nullptr;
    }
    if (it->second.record) {
        const RecordStream* stream = record_of(*connection, it->second.channel);
        if (stream == nullptr) {
            return nullptr;
        }
        facts_scratch_ = PulseStreamFacts{stream->properties(), std::nullopt, 0};
        return &facts_scratch_;
    }
    const PlaybackStream* stream = playback_of(*connection, it->second.channel);
    if (stream == nullptr) {
        return nullptr;
    }
    const int64_t queued = std::max<int64_t>(0, stream->write_index() - stream->read_index());
    facts_scratch_ =
        PulseStreamFacts{stream->properties(),
                         bytes_to_usec(static_cast<uint64_t>(queued), frame_bytes(stream->spec()),
                                       stream->spec().rate),
                         stream->sink_usec()};
    return &facts_scratch_;
}

} // namespace audiod::pulse
