// What making and ending a libpulse stream takes, playback or record: its
// format settled, the engine's request, a playback stream made on its sink
// (a client's or a sample's), the ring's wake-ups watched, the engine's
// stream closed.
#include "engine/engine.h"
#include "log.h"
#include "pulse/buffer_attributes.h"
#include "pulse/engine_errors.h"
#include "pulse/introspection.h"
#include "pulse/pulse_server.h"
#include "pulse/sample_spec.h"
#include "pulse/server_facts.h"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <sys/epoll.h>

namespace audiod::pulse {

bool PulseServer::settle_format(Connection& connection, uint32_t tag, SampleSpec& spec,
                                ChannelMap& map, const std::vector<FormatInfo>& formats) {
    Session& session = *connection.session;
    // A client of pa_stream_new_extended names its format in format infos.
    if (spec.channels == 0 && !formats.empty()) {
        for (const FormatInfo& format : formats) {
            if (const auto named = spec_of(format); named && unplayable(*named).empty()) {
                spec = *named;
                map = standard_channel_map(named->channels);
                break;
            }
        }
    }
    if (const std::string why = unplayable(spec); !why.empty()) {
        log_info("pulse", "client " + std::to_string(connection.id) + ": " + why);
        session.reply_error(tag, Error::notsupported);
        return false;
    }
    if (map.positions.size() != spec.channels) {
        session.reply_error(tag, Error::invalid);
        return false;
    }
    return true;
}

StreamRequest PulseServer::engine_request(const Connection& connection, const SampleSpec& spec,
                                          proto::StreamDirection direction) const {
    StreamRequest request;
    request.client_id = kClientIdBase + connection.id;
    request.pid = static_cast<uint32_t>(connection.pid);
    request.app = engine_app(connection);
    request.params.format = static_cast<uint32_t>(*audiod_format(spec.format));
    request.params.rate = spec.rate;
    request.params.channels = spec.channels;
    request.params.direction = static_cast<uint32_t>(direction);
    return request;
}

std::variant<PulseServer::MadePlayback, Error>
PulseServer::make_playback(Engine& engine, uint32_t id, StreamRequest made, const SampleSpec& spec,
                           const BufferAttributes& asked, const std::string& sink_name) {
    const std::vector<proto::SinkInfo> sinks = engine.list_sinks();
    auto sink = choose_sink(sinks, sink_name);
    if (!sink && (sink_name.empty() || sink_name == "@DEFAULT_SINK@") && !sinks.empty()) {
        // No sink is the default now (each is suspended or has failed):
        // the engine places the stream where it can, or says why not.
        sink = choose_sink(sinks, sinks.front().name);
    }
    if (!sink) {
        return Error::noentity;
    }
    const uint32_t bytes = frame_bytes(spec);
    BufferAttributes attributes = playback_attributes(asked, bytes, spec.rate, sink->latency_usec);
    made.params.buffer_frames = attributes.tlength / bytes;
    made.params.device = sink_name.empty() || sink_name == "@DEFAULT_SINK@" ? "" : sink->name;
    auto created = engine.create_stream(made);
    if (const auto* error = std::get_if<ClientError>(&created)) {
        log_info("pulse", "client " + std::to_string(id) + ": " + error->message);
        return pulse_error(error->code);
    }
    Stream& stream = *std::get<Stream*>(created);
    const auto placed = choose_sink(sinks, stream.device()->name()).value_or(*sink);
    // The ring holds what the client is asked for.
    const uint64_t ring_bytes = stream.ring.capacity() * bytes;
    BufferAttributes fitted = asked;
    if (ring_bytes < attributes.tlength) {
        fitted.tlength = static_cast<uint32_t>(ring_bytes);
    }
    attributes = playback_attributes(fitted, bytes, spec.rate, placed.latency_usec);
    if (attributes.tlength > ring_bytes) {
        fitted.tlength = static_cast<uint32_t>(ring_bytes);
        fitted.minreq = std::min(attributes.minreq, static_cast<uint32_t>(ring_bytes / 4));
        attributes = playback_attributes(fitted, bytes, spec.rate, 0);
    }
    return MadePlayback{&stream, attributes, placed.latency_usec};
}

bool PulseServer::watch_new_stream(uint32_t id, uint32_t tag, uint32_t stream_id,
                                   const std::string& not_bound, int wake_fd) {
    if (not_bound.empty() && watch_stream(wake_fd, stream_id)) {
        return true;
    }
    log_warning("pulse", "client " + std::to_string(id) + ": " +
                             (not_bound.empty() ? std::string("epoll: ") + std::strerror(errno)
                                                : not_bound));
    end_stream(-1, stream_id);
    with_connection(id, [&](Connection& c) { c.session->reply_error(tag, Error::internal); });
    return false;
}

bool PulseServer::watch_stream(int wake_fd, uint32_t stream_id) {
    epoll_event ev{};
    ev.events = EPOLLIN;
    ev.data.u64 = tag_of(Source::stream, stream_id);
    return ::epoll_ctl(epoll_.get(), EPOLL_CTL_ADD, wake_fd, &ev) == 0;
}

void PulseServer::end_stream(int wake_fd, uint32_t stream_id) {
    // The engine holds the same eventfd: it leaves epoll only when told.
    if (wake_fd >= 0) {
        ::epoll_ctl(epoll_.get(), EPOLL_CTL_DEL, wake_fd, nullptr);
    }
    woken_by_.erase(stream_id);
    post_job([stream_id](Engine& engine) -> EngineGateway::Answer {
        if (Stream* stream = engine.find_stream(stream_id)) {
            engine.close_stream(*stream);
        }
        return {};
    });
}

EngineGateway::Answer PulseServer::refuse_later(uint32_t id, uint32_t tag, Error code) {
    return [this, id, tag, code] {
        with_connection(id, [&](Connection& c) { c.session->reply_error(tag, code); });
    };
}

void PulseServer::pause_in_engine(uint32_t stream_id, bool paused) {
    post_job([stream_id, paused](Engine& engine) -> EngineGateway::Answer {
        if (Stream* stream = engine.find_stream(stream_id)) {
            (void)engine.set_paused(*stream, paused);
        }
        return {};
    });
}

} // namespace audiod::pulse
