// The pulse server's SUBSCRIBE: the mask a client asks for, engine events
// turned into subscription events for it, and events held (each once)
// while a client does not read, never queued without bound.
#include "engine/engine.h"
#include "pulse/pulse_server.h"

namespace audiod::pulse {

namespace {

// A client's socket queue past which its events are held, not sent.
constexpr size_t kEventBacklogBytes = 64u << 10;
// All the facilities PulseAudio has.
constexpr uint32_t kAllFacilities = 0x02ff;

} // namespace

bool PulseServer::on_subscribe_command(Connection& connection, Command command, uint32_t tag,
                                       TagReader& fields) {
    if (command != Command::subscribe) {
        return false;
    }
    uint32_t mask = 0;
    fields.get_u32(mask);
    if (!fields.done()) {
        connection.session->reply_error(tag, Error::protocol);
        return true;
    }
    connection.subscribed = mask & kAllFacilities;
    connection.held_events.clear();
    // The devices are numbered before the answer, so that the first event
    // names them as introspection will.
    const uint32_t id = connection.id;
    post_job([this, id, tag](Engine& engine) {
        auto snapshot = std::make_shared<EngineSnapshot>();
        snapshot->sinks = engine.list_sinks();
        snapshot->sources = engine.list_sources();
        return EngineGateway::Answer([this, id, tag, snapshot] {
            number(*snapshot, sink_indices_, source_indices_);
            with_connection(id, [&](Connection& c) { c.session->reply(tag); });
        });
    });
    return true;
}

void PulseServer::on_engine_event(const proto::Event& event) {
    if (event.kind == "stream-moved") {
        tell_moved(event);
    }
    if (event.kind == "app-changed") {
        tell_restore_changed();
    }
    if (event.kind == "sink-removed") {
        if (const PulseModule* module = modules_.owner_of(event.device)) {
            forget_module(module->index);
        }
    }
    // On a shared server, a user hears of their own streams only.
    const auto may_know = [&](const Connection& connection) {
        return event.app.empty() || shown_app(policy_, caller_of(connection), event.app);
    };
    for (const SubscriptionEvent& pulse_event :
         subscription_events(event, sink_indices_, source_indices_)) {
        notify(pulse_event, may_know);
    }
}

void PulseServer::tell_moved(const proto::Event& event) {
    const auto it = woken_by_.find(event.stream_id);
    if (it == woken_by_.end()) {
        return; // not a libpulse stream
    }
    const Woken woken = it->second;
    with_connection(woken.connection, [&](Connection& connection) {
        Session& session = *connection.session;
        TagWriter w;
        if (woken.record) {
            RecordStream* stream = record_of(connection, woken.channel);
            if (stream == nullptr) {
                return;
            }
            stream->moved_to(event.device, source_indices_.index(event.device));
            w.put_u32(stream->channel()).put_u32(stream->source_index());
            w.put_string(stream->source()).put_bool(false);
            if (session.version() >= 13) {
                w.put_u32(stream->attributes().maxlength).put_u32(stream->attributes().fragsize);
                w.put_usec(stream->source_latency_usec());
            }
            session.send_command(Command::record_stream_moved, w);
            return;
        }
        PlaybackStream* stream = playback_of(connection, woken.channel);
        if (stream == nullptr) {
            return;
        }
        stream->moved_to(event.device, sink_indices_.index(event.device));
        w.put_u32(stream->channel()).put_u32(stream->sink_index());
        w.put_string(stream->sink()).put_bool(false);
        if (session.version() >= 13) {
            const BufferAttributes& a = stream->attributes();
            w.put_u32(a.maxlength).put_u32(a.tlength).put_u32(a.prebuf).put_u32(a.minreq);
            w.put_usec(stream->sink_latency_usec());
        }
        session.send_command(Command::playback_stream_moved, w);
    });
}

void PulseServer::notify(const SubscriptionEvent& event,
                         const std::function<bool(const Connection&)>& may_know) {
    std::vector<uint32_t> told;
    for (const auto& [id, connection] : connections_) {
        if ((connection->subscribed & event.mask_bit()) != 0 &&
            (!may_know || may_know(*connection))) {
            told.push_back(id);
        }
    }
    for (const uint32_t id : told) {
        with_connection(id, [&](Connection& connection) { notify(connection, event); });
    }
}

void PulseServer::notify(Connection& connection, const SubscriptionEvent& event) {
    if (backed_up(connection) || !connection.held_events.empty()) {
        // Held, once: a client that does not read costs one entry per
        // thing that changed, however often it changes.
        if (std::find(connection.held_events.begin(), connection.held_events.end(), event) ==
            connection.held_events.end()) {
            connection.held_events.push_back(event);
        }
        return;
    }
    connection.session->send_command(Command::subscribe_event,
                                     TagWriter().put_u32(event.word()).put_u32(event.index));
}

void PulseServer::release_held_events(Connection& connection) {
    std::vector<SubscriptionEvent> held = std::move(connection.held_events);
    connection.held_events.clear();
    for (const SubscriptionEvent& event : held) {
        notify(connection, event);
    }
    if (connection.restore_event_held) {
        tell_restore_changed(connection);
    }
}

bool PulseServer::backed_up(const Connection& connection) {
    const size_t backlog =
        connection.queued.size() - connection.sent + connection.session->output_bytes();
    return backlog > kEventBacklogBytes;
}

void PulseServer::announce_client(Connection& connection, Happened happened) {
    connection.announced = happened == Happened::added;
    const uint32_t mask = connection.subscribed;
    if (happened == Happened::removed) {
        connection.subscribed = 0; // it is going: it is told nothing more
    }
    notify(SubscriptionEvent{Facility::client, happened, connection.id},
           [&](const Connection& other) { return sees(other, connection); });
    connection.subscribed = happened == Happened::removed ? 0 : mask;
}

} // namespace audiod::pulse
