// The engine: every sink and stream, and the control-thread operations on
// them. It owns each Stream's lifetime; a stream attached to a sink is shared
// with that sink's RT thread until the RT thread hands it back (RtEvent::
// detached or broken), and only then is it freed. Thread: control, for every
// member.
#pragma once

#include "config.h"
#include "messages.h"
#include "module_loader.h"
#include "sink.h"
#include "stream.h"

#include <chrono>
#include <functional>
#include <map>
#include <memory>
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

struct StreamRequest {
    uint32_t client_id = 0;
    uint32_t pid = 0;
    std::string app;
    proto::CreateStream params;
};

class Engine {
public:
    static constexpr size_t kMaxStreamsPerClient = 64;

    Engine(ServerConfig config, ModuleLoader& modules);
    Engine(const Engine&) = delete;
    Engine& operator=(const Engine&) = delete;
    ~Engine();

    // Opens every configured sink and starts its RT thread. Returns "" or
    // the reason the first sink failed.
    [[nodiscard]] std::string start();
    // Stops all RT threads, then frees all streams and sinks.
    void stop();

    [[nodiscard]] std::variant<Stream*, ClientError> create_stream(const StreamRequest& request);
    [[nodiscard]] Stream* find_stream(uint32_t id) const;
    [[nodiscard]] std::optional<ClientError> set_paused(Stream& stream, bool paused);
    // Detaches the stream; it is freed once its RT thread lets go of it.
    void close_stream(Stream& stream);
    [[nodiscard]] std::optional<ClientError> set_volume(const proto::SetVolume& request);

    [[nodiscard]] std::vector<proto::SinkInfo> list_sinks() const;
    [[nodiscard]] std::vector<proto::StreamInfo> list_streams() const;
    [[nodiscard]] proto::ServerInfo info() const;
    [[nodiscard]] const ServerConfig& config() const noexcept { return config_; }

    // File descriptors that become readable when an RT thread posts events.
    [[nodiscard]] std::vector<int> event_fds() const;
    // Handles the events of the sink behind `fd`.
    void handle_events(int fd);
    // Re-sends commands that found a full queue. Call periodically.
    void retry_pending();

    // Called when a client must be disconnected (it corrupted its ring).
    std::function<void(uint32_t client_id, const std::string& reason)> on_client_fault;

private:
    struct SinkEntry {
        std::unique_ptr<Sink> sink;
        bool is_default = false;
    };

    [[nodiscard]] std::string open_sink(const SinkConfig& config);
    [[nodiscard]] Sink* find_sink(const std::string& name) const;
    void send_or_queue(Sink& sink, const RtCommand& command);
    void release_stream(Stream* stream);
    void handle_sink_failure(Sink& sink, int64_t error);

    ServerConfig config_;
    ModuleLoader& modules_;
    audiod_host host_{};
    std::vector<SinkEntry> sinks_;
    std::map<uint32_t, std::unique_ptr<Stream>> streams_;
    std::vector<std::pair<Sink*, RtCommand>> pending_;
    uint32_t next_stream_id_ = 1;
    std::chrono::steady_clock::time_point started_at_ = std::chrono::steady_clock::now();
};

} // namespace audiod
