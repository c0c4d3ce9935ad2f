// The PulseAudio-protocol server: libpulse clients (every desktop
// application, pactl, paplay) served on a socket of their own, by a thread
// of its own with its own epoll loop, so that neither their requests nor
// the audio bytes they carry delay the control thread's clients.
//
// Each connection is a Session (the protocol) over a non-blocking socket.
// What a command needs of the engine goes to the control thread through
// the EngineGateway and is answered when it comes back: this thread waits
// for no engine, no RT thread and no client. A client that does not read
// what it is sent is dropped once kMaxQueuedBytes wait for it, and a
// connection that has not said AUTH within kAuthDeadline is closed.
// Thread: the pulse server's own, apart from start() and stop().
#pragma once

#include "common/status.h"
#include "control/access_policy.h"
#include "engine/client_error.h"
#include "engine/stream_table.h"
#include "protocol/unique_fd.h"
#include "pulse/engine_gateway.h"
#include "pulse/introspection.h"
#include "pulse/playback_stream.h"
#include "pulse/pulse_modules.h"
#include "pulse/record_stream.h"
#include "pulse/sample_cache.h"
#include "pulse/server_facts.h"
#include "pulse/session.h"
#include "pulse/stream_request.h"
#include "pulse/stream_restore.h"
#include "pulse/subscription.h"

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <sys/types.h>
#include <thread>
#include <variant>
#include <vector>

namespace audiod::pulse {

class PulseServer : public CommandHandler {
public:
    static constexpr size_t kMaxConnections = 128;
    static constexpr size_t kMaxQueuedBytes = 4u << 20;
    // Engine jobs one connection may have waiting: past it, its socket is
    // not read until they are answered, so that a client flooding the
    // server with requests neither grows its memory nor holds up the
    // control thread's other clients.
    static constexpr size_t kMaxPendingJobs = 32;
    static constexpr auto kAuthDeadline = std::chrono::seconds(10);
    // Engine client ids of pulse clients: apart from the control server's.
    static constexpr uint32_t kClientIdBase = 0x80000000u;
    // No connection's: connection ids start at 1.
    static constexpr uint32_t kNoConnection = 0;

    explicit PulseServer(EngineGateway& gateway);
    ~PulseServer() override;
    PulseServer(const PulseServer&) = delete;
    PulseServer& operator=(const PulseServer&) = delete;

    // Whether clients of the server's uid may send audio in shared memory
    // (memfd pools); on unless turned off. Before start(). Thread: control.
    void set_shared_memory(bool allowed) noexcept { shared_memory_ = allowed; }

    // Who may see and change what, on a server shared by several users
    // (audiod --system): as for the control socket's clients
    // (control/access_policy.h). Before start(). Thread: control.
    void set_access_policy(const AccessPolicy& policy) { policy_ = policy; }

    // Serves TCP clients too, on `listener`, each to present `cookie` in
    // its AUTH (libpulse sends its cookie file's). Before start(). Thread:
    // control.
    void serve_tcp(UniqueFd listener, std::vector<uint8_t> cookie) {
        tcp_listener_ = std::move(listener);
        tcp_cookie_ = std::move(cookie);
    }

    // Serves `listener` (bound, listening, SOCK_STREAM) on a thread of its
    // own until stop(). Thread: control.
    Status start(UniqueFd listener);
    // Ends the thread and every connection. Thread: control.
    void stop();

    // CommandHandler. Thread: pulse.
    bool on_command(Session& session, Command command, uint32_t tag, TagReader& fields) override;
    bool on_audio(Session& session, const Audio& audio) override;

private:
    // What an epoll event is about: its high 32 bits; the low ones are an id.
    enum class Source : uint32_t {
        listener = 1,
        stop = 2,
        answers = 3,
        connection = 4,
        stream = 5
    };
    static uint64_t tag_of(Source source, uint32_t id) {
        return uint64_t{static_cast<uint32_t>(source)} << 32 | id;
    }
    // The listeners' ids (Source::listener).
    static constexpr uint32_t kTcpListener = 1;
    // How often the loop looks at handshakes that are late.
    static constexpr int kLookMs = 1000;

    struct Connection {
        uint32_t id = 0;
        UniqueFd fd;
        uid_t uid = 0;
        pid_t pid = 0;
        bool admin = true; // may change what users share (access_policy.h)
        std::chrono::steady_clock::time_point since;
        std::unique_ptr<Session> session;
        std::vector<uint8_t> queued; // framed bytes the socket has not taken yet
        size_t sent = 0;             // of `queued`
        bool writing = false;        // EPOLLOUT is asked for
        std::map<uint32_t, std::unique_ptr<PlaybackStream>> playbacks; // by channel
        uint32_t next_channel = 0;                                     // playbacks' and uploads'
        std::map<uint32_t, Upload> uploads;                            // by channel
        std::map<uint32_t, std::unique_ptr<RecordStream>> records;     // by channel
        uint32_t next_record_channel = 0;
        uint32_t subscribed = 0; // SUBSCRIBE's mask
        // Events held while the socket is backed up, each once.
        std::vector<SubscriptionEvent> held_events;
        bool announced = false;          // its CLIENT new event went out
        size_t pending_jobs = 0;         // posted for it and not yet answered
        bool read_paused = false;        // while pending_jobs is at kMaxPendingJobs
        bool restore_subscribed = false; // to stream-restore's events
        bool restore_event_held = false; // one is due once it reads again
    };

    void run() noexcept;
    void accept_connections(bool tcp);
    void on_readable(uint32_t id);
    void on_writable(uint32_t id);
    // Moves the session's output to the socket, as far as it takes it;
    // false if the connection must go.
    bool flush(Connection& connection);
    void drop(uint32_t id, const std::string& reason);
    // What epoll watches the connection for: reading unless paused,
    // writing while something waits for the socket.
    void update_interest(Connection& connection);
    // Posts a job for the engine on behalf of the connection whose
    // command is being handled (none: the server's own), counted against
    // its kMaxPendingJobs.
    void post_job(EngineGateway::Job job);
    void job_answered(uint32_t id);
    void drop_late_handshakes();
    // Runs `answer` for the connection still there, then sends its output.
    void with_connection(uint32_t id, const std::function<void(Connection&)>& answer);
    [[nodiscard]] Connection* find(uint32_t id);
    [[nodiscard]] Connection* owner_of(const Session& session);
    // The application a connection says it is; and the name its streams
    // get in the engine ("UID/NAME" on a shared server).
    [[nodiscard]] static std::string declared_app(const Connection& connection);
    [[nodiscard]] std::string engine_app(const Connection& connection) const;
    // Whose stored things a connection sees: samples (sample_cache.h) and
    // kept stream-restore entries, its user's on a shared server, else all.
    [[nodiscard]] uint32_t shelf_of(const Connection& connection) const {
        return policy_.per_user ? connection.uid : 0;
    }
    [[nodiscard]] static Caller caller_of(const Connection& connection) {
        return {connection.uid, connection.admin};
    }
    // Whether `viewer` may see (and end) `other`: its own user's, or an
    // admin.
    [[nodiscard]] static bool sees(const Connection& viewer, const Connection& other) {
        return viewer.admin || viewer.uid == other.uid;
    }
    // How long the loop may sleep: till the next drain is due.
    [[nodiscard]] int next_timeout_ms() const;

    // Introspection (introspection_commands.cpp).
    bool on_introspection_command(Connection& connection, Command command, uint32_t tag,
                                  TagReader& fields);
    void answer_introspection(Connection& connection, uint32_t tag, Command command, uint32_t index,
                              const std::optional<std::string>& name,
                              const EngineSnapshot& snapshot, const EngineFacts& facts,
                              uint32_t cookie);
    // What this thread knows of a libpulse stream (null: not one of ours);
    // valid till the next call.
    [[nodiscard]] const PulseStreamFacts* stream_facts(uint32_t stream_id);

    // Control (control_commands.cpp).
    bool on_control_command(Connection& connection, Command command, uint32_t tag,
                            TagReader& fields);
    // Ends a libpulse stream of any connection, telling its client
    // (KILLED), or a playing sample; false if none has that index.
    bool kill_stream(uint32_t stream_id, bool record);
    // Whether `by` may end a libpulse stream: its user's, or an admin.
    [[nodiscard]] bool may_end_stream(const Connection& by, uint32_t stream_id);
    // Runs `operation` on the control thread and answers `tag` with its
    // outcome.
    void post_control(uint32_t id, uint32_t tag, std::function<MaybeError(Engine&)> operation);

    // Making and ending streams (stream_setup.cpp). settle_format answers
    // the client's error itself and returns false.
    bool settle_format(Connection& connection, uint32_t tag, SampleSpec& spec, ChannelMap& map,
                       const std::vector<FormatInfo>& formats);
    // A playback stream made in the engine (thread: control), for a client
    // or a sample: on the sink `sink_name` names (none or @DEFAULT_SINK@:
    // where the engine places it, as any client's), with `asked` settled
    // for the sink it landed on and fitted to its ring; or the error for
    // the client (logged).
    struct MadePlayback {
        Stream* stream = nullptr;
        BufferAttributes attributes;
        uint64_t sink_latency_usec = 0;
    };
    [[nodiscard]] static std::variant<MadePlayback, Error>
    make_playback(Engine& engine, uint32_t id, StreamRequest made, const SampleSpec& spec,
                  const BufferAttributes& asked, const std::string& sink_name);
    [[nodiscard]] StreamRequest engine_request(const Connection& connection, const SampleSpec& spec,
                                               proto::StreamDirection direction) const;
    bool watch_stream(int wake_fd, uint32_t stream_id);
    // A stream just made for client `id`: watched if it was bound to its
    // ring (`not_bound` empty); else closed in the engine, the client
    // answered INTERNAL, and false.
    bool watch_new_stream(uint32_t id, uint32_t tag, uint32_t stream_id,
                          const std::string& not_bound, int wake_fd);
    // Stops watching its ring and closes it in the engine (-1: not watched).
    void end_stream(int wake_fd, uint32_t stream_id);
    void pause_in_engine(uint32_t stream_id, bool paused);
    // An answer to a job: `code` for the client's `tag`.
    [[nodiscard]] EngineGateway::Answer refuse_later(uint32_t id, uint32_t tag, Error code);

    // Record streams (record_commands.cpp).
    bool on_record_command(Connection& connection, Command command, uint32_t tag,
                           TagReader& fields);
    void create_record(Connection& connection, uint32_t tag, TagReader& fields);
    void record_made(uint32_t id, uint32_t tag, const RecordRequest& request,
                     const BufferAttributes& attributes, EngineRing made);
    // Sends what the connection's record streams have ready, as far as its
    // socket takes it.
    void pump_records(Connection& connection);
    void close_record(Connection& connection, uint32_t channel);
    [[nodiscard]] RecordStream* record_of(Connection& connection, uint32_t channel);

    // EXTENSION: stream-restore (extension_commands.cpp).
    bool on_extension_command(Connection& connection, Command command, uint32_t tag,
                              TagReader& fields);
    void write_restore_entries(Connection& connection, uint32_t tag, TagReader& fields);
    // An application's state changed: subscribed clients are told.
    void tell_restore_changed();
    void tell_restore_changed(Connection& connection);

    // The sample cache (sample_commands.cpp).
    bool on_sample_command(Connection& connection, Command command, uint32_t tag,
                           TagReader& fields);
    [[nodiscard]] Upload* upload_of(Connection& connection, uint32_t channel);
    void start_upload(Connection& connection, uint32_t tag, Upload upload);
    void finish_upload(Connection& connection, uint32_t tag, Upload upload);
    void play_sample(Connection& connection, uint32_t tag, const std::string& name,
                     const std::string& sink_name, uint32_t volume);
    void sample_playing(uint32_t id, uint32_t tag, const SampleSpec& spec, const ChannelMap& map,
                        const BufferAttributes& attributes,
                        std::shared_ptr<const std::vector<uint8_t>> audio, EngineRing made);
    // Writes what a playing sample's stream has room for; ends the stream
    // once all of it was heard.
    void feed_sample(uint32_t stream_id);

    // Pulse modules (module_commands.cpp).
    bool on_module_command(Connection& connection, Command command, uint32_t tag,
                           TagReader& fields);
    void load_module(Connection& connection, uint32_t tag, const std::string& name,
                     const std::string& argument);
    // The module is gone (its sink was closed): clients are told.
    void forget_module(uint32_t index);

    // SUBSCRIBE (subscribe_commands.cpp).
    bool on_subscribe_command(Connection& connection, Command command, uint32_t tag,
                              TagReader& fields);
    void on_engine_event(const proto::Event& event);
    // A libpulse stream moved by the engine: its client is told where to.
    void tell_moved(const proto::Event& event);
    // Sends `event` to every connection subscribed to it (that
    // `may_know` of it, if given).
    void notify(const SubscriptionEvent& event,
                const std::function<bool(const Connection&)>& may_know = {});
    // Sends it to one, or holds it (once) while its socket is backed up.
    void notify(Connection& connection, const SubscriptionEvent& event);
    void release_held_events(Connection& connection);
    // Whether so much waits for its socket that events are held back.
    [[nodiscard]] static bool backed_up(const Connection& connection);
    // A libpulse connection named (new) or gone (removed), as a client.
    void announce_client(Connection& connection, Happened happened);

    // Playback streams (playback_commands.cpp).
    bool on_playback_command(Connection& connection, Command command, uint32_t tag,
                             TagReader& fields);
    void create_playback(Connection& connection, uint32_t tag, TagReader& fields);
    void playback_made(uint32_t id, uint32_t tag, const PlaybackRequest& request,
                       const BufferAttributes& attributes, PlaybackStream::Made made);
    // Sends what a stream's progress calls for: REQUEST, STARTED,
    // UNDERFLOW, drains' replies.
    void service(Connection& connection, PlaybackStream& stream);
    void service_drains();
    void on_stream_wake(uint32_t stream_id);
    // Ends a stream here and in the engine.
    void close_playback(Connection& connection, uint32_t channel);
    [[nodiscard]] PlaybackStream* playback_of(Connection& connection, uint32_t channel);

    EngineGateway& gateway_;
    UniqueFd listener_;
    UniqueFd tcp_listener_;
    std::vector<uint8_t> tcp_cookie_;
    UniqueFd epoll_;
    UniqueFd stop_fd_;
    std::thread thread_;
    std::map<uint32_t, std::unique_ptr<Connection>> connections_;
    uint32_t next_id_ = 1;
    // Engine stream id -> (connection id, channel), for the rings' wake-ups.
    struct Woken {
        uint32_t connection = 0;
        uint32_t channel = 0;
        bool record = false;
    };
    std::map<uint32_t, Woken> woken_by_; // a playing sample's: kNoConnection
    SampleCache samples_;
    // A sample playing: its stream, fed from the cache.
    struct SamplePlayer {
        std::unique_ptr<PlaybackStream> stream;
        std::shared_ptr<const std::vector<uint8_t>> audio;
        size_t written = 0; // bytes of `audio` in the stream
        uint64_t room = 0;  // bytes the stream has asked for
        bool draining = false;
    };
    std::map<uint32_t, SamplePlayer> sample_players_; // by engine stream id
    PulseStreamFacts facts_scratch_;
    DeviceIndices sink_indices_;
    DeviceIndices source_indices_;
    PulseModules modules_;
    // stream-restore entries of kinds audiod has no state for, by name.
    // By shelf and name.
    std::map<std::pair<uint32_t, std::string>, RestoreEntry> kept_restore_entries_;
    std::vector<uint32_t> doomed_; // connections to drop once the current event is handled
    uint32_t handling_ = 0;        // the connection whose bytes are being read (0: none)
    uint32_t cookie_ = 0;
    bool shared_memory_ = true;
    AccessPolicy policy_;
};

} // namespace audiod::pulse
