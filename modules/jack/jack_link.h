// One JACK client of a jack sink or source: its ports in the JACK graph,
// and the ring between JACK's process callback and the device's RT thread.
//
// JACK's clock drives the device. JACK calls `process` on its own thread
// once per JACK period; the callback moves a period between the ring and
// the ports and wakes the RT thread, which waits (wait_for_quantum) until a
// quantum fits in the ring or has arrived in it. The two threads share
// nothing but the ring's two counters and a semaphore, so the callback
// never waits on the server, and the server's quantum may differ from
// JACK's period.
//
// The ports `connect` names are connected at open, and again whenever such
// a port comes (back) into the graph: a source fed by another client (a
// jack sink of this server that failed and reopened, a synthesizer
// restarted) hears it again. That work is JACK's to be asked for off its
// notification thread, so a thread of the link's own does it.
//
// JACK going away (jackd stopped or killed, or the client thrown out for
// being too slow) arrives through JACK's shutdown callback: wait_for_quantum
// then returns -ENODEV, the server fails the device and reopens it once a
// second, and a new client joins the graph as soon as a JACK server is
// there again. libjack can close a client whose server is gone, which is
// what PortAudio's JACK host API cannot do (doc/portaudio-jack.md).
#pragma once

#include "audiod/module.h"
#include "common/spsc_queue.h"

#include <jack/jack.h>
#include <semaphore.h>

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <future>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace audiod::jack {

// What the jack sink and source accept.
inline constexpr audiod_option_spec kOptions[] = {
    {"server", "string", nullptr, "",
     "the JACK server's name, never started by audiod; default: $JACK_DEFAULT_SERVER, else "
     "\"default\""},
    {"client-name", "string", nullptr, "",
     "the JACK client's name, 1 to JACK's limit of characters; default: \"audiod-\" and the "
     "device's name"},
    {"connect", "string", "physical", "",
     "the ports to connect to, in order: \"physical\" (the graph's physical playback or "
     "capture ports), \"none\", a client's name, or a regular expression on port names"},
    {"latency-ms", "integer", nullptr, "1..2000",
     "what a sink keeps queued (a source holds what JACK delivers); default: JACK's period and "
     "a quantum"},
};

// What an open asks of JACK, its options read.
struct JoinRequest {
    std::string name; // the sink's or source's
    bool capture = false;
    uint32_t channels = 0;
    uint32_t quantum = 0;
    uint32_t rate = 0;
    uint32_t latency_ms = 0; // 0: JACK's period and a quantum
    std::string server;
    std::string client_name;
    std::string connect;

    bool operator==(const JoinRequest&) const = default;
};

class JackLink {
public:
    // Joins the JACK server the options (kOptions) name with `config.channels` ports, playback
    // (`capture` false) or capture, activates the client and connects its
    // ports. nullptr with a message in `error` and a negative errno in
    // `code` if it cannot: -ENODEV when no JACK server answers, -EINVAL for
    // options, a rate JACK does not run at or a second JACK server, -EAGAIN
    // while clients of a server that went away still close (see
    // libjack_clients.h). All the talking to JACK runs
    // on a thread of its own, waited for 10 s the first time this process
    // opens the client and 1 s after that (a reopen): a stopped jackd
    // never answers. Thread: control.
    static std::unique_ptr<JackLink> open(const audiod_host* host,
                                          const audiod_device_config& config, bool capture,
                                          std::string* error, int* code);
    // Leaves the graph and closes the client. libjack talks to the server
    // here, which may be stopped: close_link() is the bounded way. Thread:
    // control, or close_link's own.
    ~JackLink();
    JackLink(const JackLink&) = delete;
    JackLink& operator=(const JackLink&) = delete;

    // What the server is told at open: frames between a `write` and the
    // JACK graph's output (the ring kept full, plus what JACK reports for
    // the ports this one feeds), or between capture and `read`.
    [[nodiscard]] uint32_t latency_frames() const noexcept { return latency_; }
    [[nodiscard]] const audiod_host* host() const noexcept { return host_; }
    [[nodiscard]] const std::string& client_name() const noexcept { return client_name_; }
    [[nodiscard]] const std::string& server() const noexcept { return server_; }

    // The RT thread has begun: the callback starts moving audio (and
    // counting a ring that ran dry as an xrun). Thread: rt.
    void start() noexcept;
    // The RT thread has ended: the callback plays silence. Thread: rt.
    void stop() noexcept;
    // Sleeps until a quantum fits (playback: and no more than the latency
    // would be queued) or has been captured: 0; -ENODEV once JACK has gone
    // away; -ETIMEDOUT after two quanta and 500 ms without a JACK period (a
    // stopped or frozen server: the server fails the device on it, and
    // reopens it once JACK answers), counted while this process runs: a
    // held audiod does not take its hold for JACK's. Thread: rt.
    int wait_for_quantum() noexcept;
    // One quantum of interleaved float frames into the ring. Thread: rt.
    void write(const float* frames) noexcept;
    // One quantum out of the ring; silence for any frames not there.
    // Thread: rt.
    void read(float* frames) noexcept;

    // Fails the link as its JACK server's going away does: wait_for_quantum
    // returns -ENODEV, and the server closes the link and reopens it. False
    // if it had failed already. Thread: any.
    bool fail_for_reopen() noexcept;

    // Periods JACK found the ring too empty (playback) or too full (capture)
    // for, once audio had begun, the xruns JACK reported in its graph (a
    // client, this one or another, not finished in time: its ports' audio
    // for that period is lost or repeated), and cycles of the graph this
    // link's callback was not called for (one skip and JACK's report of it
    // count once). Thread: any.
    [[nodiscard]] uint64_t xruns() const noexcept { return xruns_.load(std::memory_order_relaxed); }
    // "server=…\nclient=…\nconnected-to=…\njack-period=…\nbuffer-ms=…\n", the
    // connections as they are now. Thread: any but rt.
    size_t describe(char* text, size_t size) const noexcept;

private:
    JackLink() = default;

    // The client's whole set-up in the JACK server, unbounded. Thread: the
    // one `open` starts for it.
    static std::unique_ptr<JackLink> join(const audiod_host* host, const JoinRequest& request,
                                          std::string* error, int* code);

    // JACK's calls, on JACK's threads: the entries libjack is given, proof
    // against its asynchronous cancellation (jack_link.cpp says how), and
    // what they do.
    static int on_process(jack_nframes_t frames, void* self);
    static int on_period_changed(jack_nframes_t frames, void* self);
    static int on_graph_xrun(void* self);
    static void on_gone(jack_status_t status, const char* reason, void* self);
    static void on_port_registered(jack_port_id_t port, int registered, void* self);
    static void on_ports_connected(jack_port_id_t a, jack_port_id_t b, int connected, void* self);
    void process(jack_nframes_t frames);
    void period_changed(jack_nframes_t frames);
    void graph_xrun();
    void gone();
    // A change in the graph, from JACK's notification thread, for the
    // connector: a port registered, or two ports (dis)connected.
    struct GraphEvent {
        enum class Kind { registered, connected, disconnected } kind;
        jack_port_id_t a;
        jack_port_id_t b;
    };
    void graph_changed(const GraphEvent& event);
    // The ports `connect` names now, in JACK's order (the n-th is for this
    // link's n-th port).
    [[nodiscard]] std::vector<std::string> targets() const;
    // Connects each port of this link to its target, if the target is
    // `only` (every target if `only` is empty).
    void connect_targets(const std::string& only);
    // The connector thread: connects a port `connect` names as it comes
    // into the graph, and keeps peers_ as JACK reports the connections.
    void follow_graph();
    void follow(const GraphEvent& event);
    // Counts, as an xrun, cycles of the JACK graph this link's callback was
    // not called for. Thread: JACK's process thread.
    void count_skipped_cycles(jack_nframes_t frames);
    // One late cycle is seen twice, as a skip here and in JACK's report of
    // it (graph_xrun), in either order: whichever comes second within
    // 100 ms of the first and finds it marked is the same xrun. `marked` is
    // kMarked | frame time, or 0. Thread: any.
    [[nodiscard]] bool same_xrun(uint64_t marked, jack_nframes_t now) const noexcept;
    void play(jack_nframes_t frames);
    void capture(jack_nframes_t frames);
    void wake();
    // Frames the ring should hold before the RT thread waits: the asked-for
    // latency, but never less than JACK's period and a quantum.
    [[nodiscard]] uint32_t keep() const noexcept;
    // A quantum fits (playback) or has arrived (capture).
    [[nodiscard]] bool ready() const noexcept;

    const audiod_host* host_ = nullptr;
    jack_client_t* client_ = nullptr;
    std::vector<jack_port_t*> ports_;
    std::unique_ptr<SpscQueue<float>> ring_;
    std::vector<float> scratch_; // the callback's interleaved period
    sem_t wake_{};
    bool wake_ready_ = false;
    bool capture_ = false;
    uint32_t channels_ = 0;
    uint32_t quantum_ = 0;
    uint32_t rate_ = 0;
    uint32_t keep_ = 0;
    uint32_t latency_ = 0;
    std::string server_;
    std::string client_name_;
    std::string connect_;         // the option; "physical" or "none" included
    unsigned long direction_ = 0; // the flags of the ports connected to
    // Between JACK's notification thread, the connector and describe().
    mutable std::mutex graph_mutex_;
    std::condition_variable graph_wake_;
    std::vector<GraphEvent> events_;              // for the connector
    bool quit_ = false;                           // the connector ends
    std::vector<std::vector<std::string>> peers_; // each port's connections
    std::thread connector_;
    std::atomic<uint32_t> period_{0};
    std::atomic<bool> set_up_{false}; // everything the callback reads is there
    std::atomic<int> in_callback_{0}; // JACK is inside `process`
    std::atomic<bool> started_{false};
    std::atomic<bool> primed_{false}; // the ring has once held a whole period
    std::atomic<bool> waiting_{false};
    std::atomic<bool> gone_{false};
    // Ready when the thread that told this link its server went away has
    // ended (see ~JackLink); invalid until one has. Guarded by graph_mutex_.
    std::shared_future<void> teller_end_;
    std::atomic<uint64_t> xruns_{0};
    // The frame time the next process call begins at, if no cycle is
    // skipped, and whether audio moved in the last one (a cycle skipped
    // while stopped loses nothing); JACK's process thread's alone.
    jack_nframes_t next_cycle_ = 0;
    bool moved_last_cycle_ = false;
    // An xrun counted from one side and not yet seen from the other: the
    // last skip JACK has not reported, the last report no skip has matched
    // (kMarked | the frame time it was counted at; 0 when none).
    static constexpr uint64_t kMarked = uint64_t{1} << 32;
    std::atomic<uint64_t> unreported_skip_{0};
    std::atomic<uint64_t> unmatched_report_{0};
};

// libjack prints to standard error whenever a client cannot reach a server,
// which the once-a-second reopen of a sink whose JACK is gone would repeat
// for as long as it is gone: this keeps it quiet (for the whole process),
// and the module says what went wrong itself.
void silence_libjack();

// Destroys the link on a thread of its own, waiting for it at most 500 ms; a
// client that does not close in time is left to that thread and said so in
// the server's log. Thread: control.
void close_link(std::unique_ptr<JackLink> link);

} // namespace audiod::jack
