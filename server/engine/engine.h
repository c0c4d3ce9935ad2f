// The engine: every sink and stream, and the control-thread operations on
// them — creating and closing streams, loading and unloading sinks, moving
// streams between sinks, volumes and mutes, and what is remembered per
// application.
//
// Ownership. The engine owns each Stream. While a stream is attached to a
// sink, that sink's RT thread uses it too; it stops only when the RT thread
// hands it back (RtEvent::detached), which comes after every command queued
// for the stream. A stream is freed, or attached to another sink, only then.
//
// Moving. A move sends `detach` to the source sink; the RT thread lets go at
// a cycle boundary and the engine attaches the stream to the destination,
// whose RT thread takes it at its next cycle. The ring's read position is
// part of the stream, so no frame is lost or repeated; the stream is silent
// for at most one source quantum plus one destination quantum. While a
// stream is between sinks no RT thread may touch it, so changes made then
// (volume, pause) are applied when it lands.
//
// Gains. A stream plays at stream volume x application volume, silenced if
// either is muted; the sink's own volume and mute apply to its whole mix.
//
// Thread: control, for every member.
#pragma once

#include "config/config.h"
#include "device/device.h"
#include "device/stream.h"
#include "engine/app_state.h"
#include "engine/module_loader.h"
#include "engine/source_player.h"
#include "engine/state_file_writer.h"
#include "protocol/messages.h"

#include <chrono>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <variant>
#include <vector>

namespace audiod {

// An error for a client: an AUDIOD_E_* code and a sentence.
struct ClientError {
    int code = 0;
    std::string message;
};

using MaybeError = std::optional<ClientError>;

struct StreamRequest {
    uint32_t client_id = 0;
    uint32_t pid = 0;
    std::string app;
    proto::CreateStream params;
};

// What the engine tells the control server.
class EngineObserver {
public:
    virtual ~EngineObserver() = default;
    virtual void on_event(const proto::Event& event) = 0;
    // A sink's RT event fd to watch, or to stop watching.
    virtual void on_device_opened(Device& sink) = 0;
    virtual void on_device_closing(Device& sink) = 0;
    // The client must be disconnected (it corrupted its ring).
    virtual void on_client_fault(uint32_t client_id, const std::string& reason) = 0;
};

class Engine {
public:
    static constexpr size_t kMaxStreamsPerClient = 64;
    static constexpr size_t kMaxSinks = 32;

    Engine(ServerConfig config, ModuleLoader& modules, AppStateStore& state);
    Engine(const Engine&) = delete;
    Engine& operator=(const Engine&) = delete;
    ~Engine();

    void set_observer(EngineObserver* observer) noexcept { observer_ = observer; }

    // Opens every configured sink and source and starts its RT thread;
    // fails with the reason the first one failed.
    Status start();
    // Stops all RT threads, then frees all streams and sinks.
    void stop();

    // ---- streams (engine.cpp) ----
    [[nodiscard]] std::variant<Stream*, ClientError> create_stream(const StreamRequest& request);
    [[nodiscard]] Stream* find_stream(uint32_t id) const;
    [[nodiscard]] MaybeError set_paused(Stream& stream, bool paused);
    // Drops what a playback stream queued before ring position `position`
    // (device/stream.h: flush_stream), wherever the stream is.
    [[nodiscard]] MaybeError flush(Stream& stream, uint64_t position);
    // Detaches the stream; it is freed once its RT thread lets go of it.
    void close_stream(Stream& stream);

    // ---- sinks and routing (engine_routing.cpp) ----
    // A sink, or with `source` a capture source, opened or closed at run
    // time; a closed device's streams move to the default sink (record
    // streams: to its monitor).
    [[nodiscard]] MaybeError
    load_sink(const std::string& type, const std::string& name,
              const std::vector<std::pair<std::string, std::string>>& options, bool source = false);
    [[nodiscard]] MaybeError unload_sink(const std::string& name, bool source = false);
    [[nodiscard]] MaybeError set_default_sink(const std::string& name);
    [[nodiscard]] MaybeError move(const proto::MoveStream& request);
    // Applies a new configuration while streams play (engine_reload.cpp):
    // returns what changed, one line, then a line per device that could not
    // be opened; or an error, and nothing changed, if `next` cannot work.
    [[nodiscard]] std::variant<std::string, ClientError> reload(ServerConfig next);

    // ---- volume and mute (engine_volume.cpp) ----
    [[nodiscard]] MaybeError set_volume(const proto::SetVolume& request);
    [[nodiscard]] MaybeError set_mute(const proto::SetMute& request);
    // Drops the settings remembered for an application (its rule or the
    // defaults apply again, also to its streams playing now).
    [[nodiscard]] MaybeError forget_app(const std::string& app);

    // ---- reports (engine_report.cpp) ----
    [[nodiscard]] std::vector<proto::SinkInfo> list_sinks() const;
    [[nodiscard]] std::vector<proto::StreamInfo> list_streams() const;
    // Applications playing now, remembered (settings or when they last
    // played) or with a rule in the configuration, by name.
    [[nodiscard]] std::vector<proto::AppInfo> list_apps() const;
    [[nodiscard]] std::vector<proto::SourceInfo> list_sources() const;
    [[nodiscard]] proto::ServerInfo info() const;
    [[nodiscard]] const ServerConfig& config() const noexcept { return config_; }

    // ---- housekeeping ----
    // Handles the RT events of the sink behind `fd`.
    void handle_events(int fd);
    // Re-sends queued commands, reports stream state changes, saves the
    // state file. Call periodically.
    void tick();

private:
    // Where a source plays (engine/source_player.h), if anywhere.
    struct PlayRequest {
        std::string sink;
        uint32_t latency_ms = SourcePlayer::kDefaultLatencyMs;
    };
    struct DeviceEntry {
        std::unique_ptr<Device> device;
        std::string configured_type; // "auto" stays "auto" here
        std::vector<std::pair<std::string, std::string>> options;
        // A failed sink is reopened from then on, once a second, until its
        // device is back.
        std::chrono::steady_clock::time_point next_reopen{};
        // A source that finds sources (discover = true) passes its `sink`
        // on to them; a source it found names it here.
        PlayRequest passes_on;
        std::string found_by;
    };
    // A module's audiod_host::request_source, queued for the control thread.
    struct SourceRequest {
        std::string requester;
        std::string type;
        std::string name;
        std::vector<std::pair<std::string, std::string>> options;
        bool remove = false;
    };

    // engine.cpp
    void send_or_queue(Device& sink, const RtCommand& command);
    void release_stream(Stream& stream);
    [[nodiscard]] RtCommand gain_command(Stream& stream) const;
    void emit(proto::Event event) const;
    [[nodiscard]] proto::Event stream_event(const char* kind, const Stream& stream) const;
    void report_state_changes();
    // Hands the state file's new text to the writer, and logs a failed write
    // (the state is then written again).
    void save_state();
    // The RT watchdog: demotes RT threads that stopped completing cycles,
    // and abandons one stuck in its module (its streams move on).
    void watch_rt_threads();
    [[nodiscard]] bool is_stalled(const Stream& stream) const;
    [[nodiscard]] std::string state_name(const Stream& stream) const;

    // engine_routing.cpp
    [[nodiscard]] std::variant<std::unique_ptr<Device>, std::string>
    open_sink(const std::string& type, const std::string& name,
              std::vector<std::pair<std::string, std::string>> options, bool capture = false);
    // A sink by name (not a capture source).
    [[nodiscard]] Device* find_sink(const std::string& name) const;
    // What a record stream records from: a capture source by name, or the
    // sink whose monitor is named ("out.monitor"); the default sink's
    // monitor for "". Sets *wanted to the endpoint's name.
    [[nodiscard]] Device* find_source(const std::string& name, std::string* wanted) const;
    [[nodiscard]] Device* default_sink() const;
    [[nodiscard]] Device* fallback_for(const Device& leaving) const;
    void add_sink(std::unique_ptr<Device> sink, std::string configured_type,
                  std::vector<std::pair<std::string, std::string>> options);
    void reopen_failed_sinks();
    // Hands the configuration's [apps.NAME] rules to the state store.
    void take_app_rules();
    // Makes `name` the default sink, announcing it; false if it already was.
    bool change_default_sink(const std::string& name);
    // Puts `fresh` in the entry's place; the streams of the old device (its
    // RT thread stopped) land on it.
    void swap_device(DeviceEntry& entry, std::unique_ptr<Device> fresh);
    // Reopens a running sink or source with new settings (engine_reload.cpp).
    [[nodiscard]] Status reopen_device(const SinkConfig& device, bool source);
    // The running sink (or source) of that exact name, else nullptr.
    [[nodiscard]] const Device* running_device(const std::string& name, bool source) const;
    void start_move(Stream& stream, Device& destination);
    void land(Stream& stream, Device& destination);
    // Takes every stream off a sink whose RT thread has stopped.
    void rehome_streams(Device& leaving);
    void bring_back_streams(Device& arrived);
    void handle_sink_failure(Device& sink, int64_t error);
    // What a failed sink's streams and listeners learn (after its RT thread
    // has stopped, or been abandoned).
    void announce_failure(Device& sink);

    // engine_players.cpp
    // Takes `sink` and `play-latency-ms` out of a source's options: where
    // to play it, if anywhere. Sets *error on a bad value.
    [[nodiscard]] static std::variant<PlayRequest, std::string>
    take_play_request(std::vector<std::pair<std::string, std::string>>& options);
    // Starts playing `source` into the request's sink.
    [[nodiscard]] Status play_source(Device& source, const PlayRequest& request);
    // Stops the player of the source so named, if it has one, and closes
    // its streams.
    void stop_playing(const std::string& source);
    [[nodiscard]] const SourcePlayer* player_of(const Device& source) const;
    // "key=value" lines for `audioctl list sources`.
    [[nodiscard]] static std::string player_details(const SourcePlayer& player);

    // engine_found_sources.cpp
    static void request_source(const audiod_host* host, const char* requester, const char* type,
                               const char* name, const audiod_option* options, size_t option_count,
                               int remove);
    void handle_source_requests();
    // Closes the sources a source found (it is going).
    void close_found_sources(const std::string& requester);
    // Whether a source's options say it finds sources (discover = true).
    [[nodiscard]] static bool
    finds_sources(const std::vector<std::pair<std::string, std::string>>& options);

    // engine_volume.cpp
    void apply_gain(Stream& stream);
    // Applies an application's settings to its streams and announces them.
    void apply_app(const std::string& app);
    [[nodiscard]] MaybeError check_app(const std::string& app) const;
    template <class Change>
    MaybeError change_gain(uint32_t target, uint32_t stream_id, const std::string& name,
                           Change&& change);

    ServerConfig config_;
    ModuleLoader& modules_;
    AppStateStore& state_;
    StateFileWriter state_writer_; // the control thread never waits for the disk
    EngineObserver* observer_ = nullptr;
    audiod_host host_{};
    std::vector<DeviceEntry> devices_;
    std::string default_sink_;
    std::map<uint32_t, std::unique_ptr<Stream>> streams_;
    std::vector<std::pair<Device*, RtCommand>> pending_;
    std::vector<std::unique_ptr<SourcePlayer>> players_;
    std::mutex source_requests_mutex_;
    std::vector<SourceRequest> source_requests_; // guarded by source_requests_mutex_
    uint32_t next_stream_id_ = 1;
    std::chrono::steady_clock::time_point started_at_ = std::chrono::steady_clock::now();
    uint64_t rt_time_demotions_seen_ = 0;
    std::chrono::steady_clock::time_point last_rt_watch_{}; // long ago: the first look is held
};

// The highest stream, application or sink volume: +12 dB.
inline constexpr float kMaxGain = 4.0f;

// A failed sink or source is reopened this often until its device is back.
inline constexpr auto kReopenInterval = std::chrono::seconds(1);

// A sink whose RT thread completes no cycle for this long is demoted.
inline constexpr auto kRtWatchdogTimeout = std::chrono::milliseconds(1000);
// One whose RT thread has been inside a call into its module (a driver that
// does not return) this long is given up: it fails, and its streams move
// to another sink. Long enough that a loaded machine's slow cycles never
// come near it: clients already keep their own clock after 500 ms.
inline constexpr auto kRtAbandonTimeout = std::chrono::milliseconds(4000);
// The watchdog looks at least every 200 ms; a longer gap means the whole
// server was held (SIGSTOP, a debugger, a frozen VM, a machine too loaded to
// run it), and the sinks' silence is counted afresh.
inline constexpr auto kWatchdogHeldAfter = std::chrono::milliseconds(500);

// Every sink is also a source, its monitor, named SINK + this.
inline constexpr std::string_view kMonitorSuffix = ".monitor";
// The sink a source name monitors ("out.monitor" -> "out"), or "".
[[nodiscard]] std::string monitored_sink(const std::string& source);
// Where a stream is (or is going): its sink's name, or "SINK.monitor" for a
// record stream. Thread: control.
[[nodiscard]] std::string endpoint_name(const Stream& stream);

// Takes a sink option that the engine itself handles (quantum, rate,
// channels) out of a module's options. Returns its value (`fallback` when
// absent) or an error naming the allowed range.
[[nodiscard]] std::variant<uint32_t, std::string>
take_uint_option(std::vector<std::pair<std::string, std::string>>& options, const std::string& key,
                 uint32_t fallback, uint32_t min, uint32_t max);

} // namespace audiod
