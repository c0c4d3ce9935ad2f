// Internal state behind the opaque handles of the public C API.
//
// Threads and locks. A player may call into a context and its streams from
// several threads; the context's supervisor thread (supervisor.cpp) watches
// the server and re-creates streams after a server is replaced. Lock order:
// audiod_context::request_mutex, then streams_mutex, then a StreamCore's
// mutex; never the other way round. A stream's write path takes only its
// StreamCore mutex, briefly, and never waits while holding it.
//
// Lifetime. A StreamCore is shared between the player's handle and the
// supervisor (std::shared_ptr), so a player can close a stream while the
// supervisor is re-creating it; the supervisor notices `closed` and undoes
// its work.
#pragma once

#include "audiod/audiod.h"
#include "keep_clock.h"
#include "protocol/deadline.h"
#include "protocol/messages.h"
#include "protocol/request_channel.h"
#include "protocol/ring_binding.h"
#include "protocol/unique_fd.h"

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace audiod::client {

// How long a stream's server heartbeat may stand still before the server
// counts as stalled and the stream keeps its own clock.
inline constexpr auto kStallTimeout = std::chrono::milliseconds(500);
// How often the supervisor looks while all is well: a stall is noticed
// 500-750 ms after it began (a writer waiting for room notices a hang-up
// at once by itself). Each look wakes the player's process, which at a
// default buffer is as often as feeding it.
inline constexpr auto kWatchPeriod = std::chrono::milliseconds(250);
// How often it looks while a stream keeps its clock (waking poll-based
// players as the clock makes room), and retries a lost server.
inline constexpr auto kSupervisePeriod = std::chrono::milliseconds(50);
inline constexpr auto kRetryPeriod = std::chrono::milliseconds(250);
// Deadline for the supervisor's own requests, so that it keeps its pace.
inline constexpr int kSupervisorRequestMs = 500;

struct StreamCore {
    // ---- fixed at creation --------------------------------------------
    audiod_context* context = nullptr;
    int format = AUDIOD_FORMAT_INVALID;
    uint32_t rate = 0;
    uint32_t channels = 0;
    uint32_t frame_bytes = 0;
    uint32_t buffer_frames = 0;
    std::string wanted_sink; // as the player asked ("" = default)
    bool keep_clock = true;
    bool manual_start = false; // AUDIOD_STREAM_MANUAL_START
    bool record = false;       // AUDIOD_STREAM_RECORD: the server writes, the player reads

    // ---- guarded by mutex ----------------------------------------------
    std::mutex mutex;
    RingBinding ring; // unbound only briefly, or after close
    uint32_t server_id = 0;
    float volume = 1.0f;
    bool paused = false;
    bool closed = false;
    bool started = false;    // manual_start streams: audiod_stream_start() was called
    uint64_t client_pos = 0; // frames the player has written (record: read), ever
    uint64_t ring_base = 0;  // client_pos when the current ring was bound
    uint64_t start_threshold = 0;
    uint32_t wake_frames = 0;
    uint64_t xruns_before = 0;  // from rings of earlier servers
    bool keeping_clock = false; // no server consumes it: `clock` does
    // Record, keeping the clock: the frames before this position are still
    // in the ring (the server recorded them before it went).
    uint64_t recorded_in_ring = 0;
    bool broken = false; // lost, and keep-clock is off
    int broken_code = 0; // AUDIOD_E_DISCONNECTED or AUDIOD_E_STALLED
    KeepClock clock;
    // The descriptor handed to the player: its number never changes; a new
    // ring's eventfd is dup2()ed onto it.
    UniqueFd wake_fd;
    // What a blocking read or write waits on (waiting.cpp): an epoll set of
    // wake_fd, edge-triggered, and the context's hang-up set. One system
    // call per wake-up where poll() and a read of the eventfd took two and
    // set up their waits anew each time. Made before the core is shared,
    // never replaced.
    UniqueFd wait_epoll;
    // wake_fd is in wait_epoll (not while rebind swaps it, nor if epoll
    // failed). Until then the stream waits with poll() and reads its
    // eventfd empty, as it also does for good once the player has taken
    // wake_fd to poll it itself (audiod_stream_fd): a level left up would
    // end each of the player's polls at once.
    std::atomic<bool> wake_fd_watched{false};
    std::atomic<bool> fd_exported{false};
    // Counts the eventfds dup2()ed onto wake_fd: an epoll set that holds
    // wake_fd knows the old one only (audiod_stream_fd_generation).
    std::atomic<uint32_t> wake_fd_generation{0};

    // ---- supervisor thread only ------------------------------------------
    uint64_t seen_heartbeat = 0;
    MonoClock::time_point heartbeat_changed{};

    // Frames queued (guarded: call with `mutex` held).
    [[nodiscard]] uint64_t queued_locked(MonoClock::time_point now);
    // Record streams: frames ready to read; with keep-clock, silence the
    // clock has "captured" (and what it had to drop past a full buffer is
    // skipped). Call with `mutex` held.
    [[nodiscard]] uint64_t ready_locked(MonoClock::time_point now);
    // What a transfer can move now: room to write, or frames ready to read.
    [[nodiscard]] uint64_t available_locked(MonoClock::time_point now) {
        return record ? ready_locked(now) : capacity_locked() - queued_locked(now);
    }
    // Moves `frames` (at most available_locked()) between `buffer` and the
    // ring of the server playing the stream: writes them (and starts the
    // stream once enough is queued), or reads them.
    void ring_transfer_locked(void* buffer, uint64_t frames, MonoClock::time_point now);
    // The same while keeping the clock: written frames are dropped as the
    // clock consumes them; reads deliver what the server recorded before it
    // went, then silence.
    void clock_transfer_locked(void* buffer, uint64_t frames);
    // Whether a player polling wake_fd should be woken now (while keeping the clock).
    [[nodiscard]] bool wake_due_locked(MonoClock::time_point now);
    [[nodiscard]] uint64_t capacity_locked() const noexcept { return ring.capacity(); }
    // Switches to keep-clock from `since` (the moment the server stopped).
    void keep_clock_locked(MonoClock::time_point since);
    // Wakes a player blocked on wake_fd.
    void wake() const noexcept;
};

// What creating a stream on the server yields.
struct ServerStream {
    uint32_t id = 0;
    RingBinding ring;
    UniqueFd wake;
};

// Sends CreateStream for `core`'s parameters to `sink` and maps the ring.
// Thread: any; takes the context's request_mutex.
int create_on_server(audiod_context* ctx, const StreamCore& core, const std::string& sink,
                     float volume, int timeout_ms, ServerStream* out);

// Binds a freshly created server stream to `core` (for a re-creation after
// a server was lost). Returns false if the core was closed meanwhile.
bool rebind(StreamCore& core, ServerStream&& fresh);

// Starts the context's supervisor thread if it is not running.
void ensure_supervisor(audiod_context* ctx);

} // namespace audiod::client

struct audiod_context {
    std::string app_name;
    std::string socket_path; // the one it connected to (client_socket_paths())
    uint32_t client_id = 0;
    uint32_t server_rate = 0;
    uint32_t server_channels = 0;

    // Serialises requests: one request and its reply are in flight at a time.
    std::mutex request_mutex;
    audiod::proto::RequestChannel channel;
    std::string last_error;
    bool subscribed = false;
    // Set by whoever sees the socket hang up; the supervisor reconnects.
    std::atomic<bool> connection_lost{false};
    // channel.fd(), readable without request_mutex (writers poll it for a
    // hang-up while the supervisor may be replacing the channel).
    std::atomic<int> socket_fd{-1};

    // The player's open stream handles (each holds its StreamCore).
    std::mutex streams_mutex;
    std::vector<audiod_stream*> streams;

    // Events: an epoll fd over the socket and `events_pending`, an eventfd
    // set while the channel holds queued events (which arrive during
    // requests, when nobody polls the socket).
    audiod::UniqueFd events_epoll;
    audiod::UniqueFd events_pending;
    // An epoll set over the socket that becomes ready when the server hangs
    // up; every stream's wait_epoll holds it. The supervisor adds each new
    // socket (a closed one leaves by itself).
    audiod::UniqueFd hangup_epoll;

    // The supervisor thread (supervisor.cpp).
    std::thread supervisor;
    std::mutex supervisor_mutex;
    std::condition_variable supervisor_wakeup;
    bool supervisor_stopping = false;

    // RequestChannel::call under the context's lock. Thread: any.
    template <class Request>
    int call(const Request& request, audiod::proto::MsgType reply_type,
             audiod::proto::Packet* reply, const audiod::Deadline& deadline) {
        std::lock_guard lock(request_mutex);
        return call_locked(request, reply_type, reply, deadline);
    }

    template <class Request>
    int call_locked(const Request& request, audiod::proto::MsgType reply_type,
                    audiod::proto::Packet* reply, const audiod::Deadline& deadline) {
        const int rc = channel.call(request, reply_type, reply, deadline);
        last_error = channel.last_error();
        if (rc == AUDIOD_E_DISCONNECTED) {
            connection_lost.store(true);
        }
        signal_queued_events();
        return rc;
    }

    // Sets or clears events_pending to match the queue. Call under the lock.
    void signal_queued_events();
};

struct audiod_stream {
    std::shared_ptr<audiod::client::StreamCore> core;
};
