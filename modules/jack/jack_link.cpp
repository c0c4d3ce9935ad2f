#include "jack_link.h"

#include "device_options.h"
#include "libjack_clients.h"

#include <algorithm>
#include <bit>
#include <cerrno>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <future>
#include <map>
#include <mutex>
#include <pthread.h>
#include <set>
#include <thread>

namespace audiod::jack {

namespace {

// jackd2's largest period; the callback's buffer is sized for it once, so
// that a period change never allocates.
constexpr uint32_t kMaxPeriod = 8192;

// How long the RT thread waits beyond two quanta for a JACK period before
// it takes JACK for frozen and fails the sink: long enough that a jackd
// without real-time rights on a busy machine, which calls no one for
// 200 ms now and then (seen in CI, beside a build), does not send the
// streams to another sink; short of the watchdog's second.
constexpr int64_t kNoPeriodWaitNs = 500'000'000;
// That wait is watched in slices, and only slices this thread saw end
// count: a server that was itself held (SIGSTOP, a debugger, a frozen VM)
// finds its deadline long past when it runs again, and must not take its
// own hold for JACK's silence (each hold of the soak failed the sink and
// sent its streams elsewhere). A hold counts as one slice.
constexpr int kNoPeriodSlices = 5;

void quiet(const char*) {}

// libjack's entry points into a link (see below) carry no sanitizer
// instrumentation, which would give them a cleanup table.
#if defined(__clang__)
#define JACK_ENTRY __attribute__((disable_sanitizer_instrumentation))
#else
#define JACK_ENTRY __attribute__((no_sanitize("thread")))
#endif

// Cancellation off for the length of a callback, and back on after it
// (where a cancel sent meanwhile acts): see JackLink::on_process.
JACK_ENTRY int cancel_off() {
    int state = 0;
    pthread_setcancelstate(PTHREAD_CANCEL_DISABLE, &state);
    return state;
}

JACK_ENTRY void cancel_back_on(int state) {
    pthread_setcancelstate(state, nullptr);
}

// Ready once the calling thread has ended: a libjack thread, whose end
// nothing of libjack's lets a client see.
std::shared_future<void> end_of_this_thread() {
    struct Endings {
        std::vector<std::promise<void>> promises;
        ~Endings() {
            for (std::promise<void>& ended : promises) {
                ended.set_value();
            }
        }
    };
    thread_local Endings endings;
    return endings.promises.emplace_back().get_future().share();
}

// How long a close waits for the thread that told of the server's going to
// end: jackd tells its clients before it closes them, and that thread reads
// on until it has (see ~JackLink).
constexpr auto kTellerEndWait = std::chrono::seconds(3);

timespec monotonic_after(int64_t ns) {
    timespec t{};
    clock_gettime(CLOCK_MONOTONIC, &t);
    const int64_t total = int64_t{t.tv_nsec} + ns;
    t.tv_sec += static_cast<time_t>(total / 1'000'000'000);
    t.tv_nsec = static_cast<long>(total % 1'000'000'000);
    return t;
}

uint32_t round_up(uint32_t frames, uint32_t quantum) {
    return (frames + quantum - 1) / quantum * quantum;
}

// The server's name as libjack resolves it when none is given.
std::string default_server() {
    const char* name = std::getenv("JACK_DEFAULT_SERVER");
    return name != nullptr && name[0] != '\0' ? name : "default";
}

// Every port of `client` with these flags, as libjack lists them (freed with
// jack_free).
std::vector<std::string> list_ports(jack_client_t* client, const char* pattern,
                                    unsigned long flags) {
    std::vector<std::string> out;
    if (const char** ports = jack_get_ports(client, pattern, JACK_DEFAULT_AUDIO_TYPE, flags)) {
        for (const char** p = ports; *p != nullptr; ++p) {
            out.emplace_back(*p);
        }
        jack_free(ports);
    }
    return out;
}

// "system, jack_rec": the clients owning ports with these flags, for a
// message that says what `connect` could have named.
std::string client_names(jack_client_t* client, unsigned long flags) {
    std::vector<std::string> names;
    for (const std::string& port : list_ports(client, nullptr, flags)) {
        std::string owner = port.substr(0, port.find(':'));
        if (std::find(names.begin(), names.end(), owner) == names.end()) {
            names.push_back(std::move(owner));
        }
    }
    std::string text;
    for (const std::string& name : names) {
        text += (text.empty() ? "" : ", ") + name;
    }
    return text.empty() ? "none" : text;
}

// One join of JACK (JackLink::join), run on a thread of its own: a JACK
// server that is stopped, or still shutting down, accepts a client's
// connection and never answers, and the control thread must not wait for
// it, at the first call or at any after it.
//
// A join that ends after its caller gave up (a loaded machine's jackd
// took longer than the wait) is kept, joined, for kKeepLateJoin: the next
// open of the same client takes it as it is. Without that, a machine on
// which every join takes longer than a reopen's wait never got its device
// back (every join given up on, then closed: integration.jack under TSan).
struct JoinAttempt {
    std::mutex mutex;
    std::condition_variable finished; // done, or (once abandoned) the link taken
    bool done = false;
    bool abandoned = false; // the caller gave up: the thread keeps, then closes, what it opened
    JoinRequest request;
    std::unique_ptr<JackLink> link;
    std::string error;
    int code = 0;
};

constexpr auto kKeepLateJoin = std::chrono::seconds(30);

// By JACK server's name, the attempt left to its thread while that server
// has still not answered: meanwhile every open of a client of that server
// fails at once instead of adding a thread.
std::mutex g_pending_mutex;
std::map<std::string, std::shared_ptr<JoinAttempt>> g_pending;

// A reopen (once a second on the control thread, while clients wait on
// it) waits little; a first open, at the server's start or a load-sink,
// waits long enough for a loaded machine's jackd to take a new client
// (over a second under sanitizers with other work about).
constexpr auto kFirstOpenWait = std::chrono::seconds(10);
constexpr auto kReopenWait = std::chrono::seconds(1);

// "server/client" of each client this process has opened once.
std::set<std::string> g_opened_before;

// `connect` as a jack_get_ports pattern: a client's name stands for all its
// ports; anything with a ':' is a regular expression on full port names.
std::string port_pattern(const std::string& connect) {
    if (connect.find(':') != std::string::npos) {
        return connect;
    }
    std::string escaped = "^";
    for (const char c : connect) {
        if (std::strchr("\\^$.|?*+()[]{}", c) != nullptr) {
            escaped += '\\';
        }
        escaped += c;
    }
    return escaped + ":";
}

// The copies between JACK's port buffers and the interleaved frames. A port
// buffer is shared memory another client reads what this one wrote into (or
// wrote what this one reads), in an order JACK keeps with semaphores of its
// own that ThreadSanitizer cannot see: the tests tell it to leave these two
// functions alone, by name, and nothing else. (Not inlined, so that the
// name is always on the stack.)
[[gnu::noinline]] void copy_into_jack_port(float* port, size_t frames, const float* from,
                                           size_t given, uint32_t stride) {
    for (size_t i = 0; i < given; ++i) {
        port[i] = from[i * stride];
    }
    std::fill(port + given, port + frames, 0.0F);
}

[[gnu::noinline]] void copy_out_of_jack_port(const float* port, size_t frames, float* to,
                                             uint32_t stride) {
    for (size_t i = 0; i < frames; ++i) {
        to[i * stride] = port[i];
    }
}

} // namespace

void silence_libjack() {
    jack_set_error_function(quiet);
    jack_set_info_function(quiet);
}

std::unique_ptr<JackLink> JackLink::open(const audiod_host* host,
                                         const audiod_device_config& config, bool capture,
                                         std::string* error, int* code) {
    const DeviceOptions options(config);
    if (const auto refusal =
            options.check_keys(kOptions, capture ? "the jack source" : "the jack sink")) {
        return refuse(error, code, *refusal, -EINVAL);
    }
    JoinRequest request;
    request.name = config.name;
    request.capture = capture;
    request.channels = config.channels;
    request.quantum = config.quantum;
    request.rate = config.rate;
    if (const auto text = options.get("latency-ms")) {
        uint64_t ms = 0;
        if (!parse_uint(*text, 2000, ms) || ms == 0) {
            return refuse(error, code, "latency-ms = " + *text + " is not 1-2000", -EINVAL);
        }
        request.latency_ms = static_cast<uint32_t>(ms);
    }
    request.server = options.get("server").value_or(default_server());
    request.client_name = options.get("client-name").value_or(std::string("audiod-") + config.name);
    if (request.client_name.empty() ||
        request.client_name.size() >= static_cast<size_t>(jack_client_name_size())) {
        return refuse(error, code,
                      "client-name must be 1-" + std::to_string(jack_client_name_size() - 1) +
                          " characters",
                      -EINVAL);
    }
    request.connect = options.get("connect").value_or("physical");
    silence_libjack();

    const std::string key = request.server + "/" + request.client_name;
    std::chrono::milliseconds wait{};
    {
        const std::lock_guard guard(g_pending_mutex);
        if (const auto pending = g_pending.find(request.server); pending != g_pending.end()) {
            JoinAttempt& late = *pending->second;
            const std::lock_guard attempt(late.mutex);
            if (!late.done) {
                return refuse(error, code,
                              "JACK server '" + request.server +
                                  "' has still not answered an earlier client (stopped, or "
                                  "shutting down?)",
                              -ENODEV);
            }
            if (late.link && late.request == request) {
                // The join given up on ended after all: it is this one.
                std::unique_ptr<JackLink> link = std::move(late.link);
                late.finished.notify_all();
                g_pending.erase(pending);
                g_opened_before.insert(key);
                if (host != nullptr && host->log != nullptr) {
                    host->log(AUDIOD_LOG_INFO, "jack",
                              ("client " + request.client_name +
                               ": the join given up on ended late; taken as it is")
                                  .c_str());
                }
                return link;
            }
        }
        g_pending.erase(request.server);
        wait = g_opened_before.contains(key) ? kReopenWait : kFirstOpenWait;
    }
    if (const auto other = other_server_in_use(request.server)) {
        return refuse(error, code,
                      "libjack serves one JACK server per process, and this one is a client of '" +
                          *other + "' (server = \"" + *other +
                          "\" here, or an audiod of its own for '" + request.server + "')",
                      -EINVAL);
    }
    // The wait covers both: clients closing first, then the join.
    const auto deadline = std::chrono::steady_clock::now() + wait;
    if (std::string why; !wait_until_safe_to_open(wait, &why)) {
        return refuse(error, code, std::move(why), -EAGAIN);
    }
    auto attempt = std::make_shared<JoinAttempt>();
    attempt->request = request;
    try {
        std::thread([attempt, host, request] {
            std::string failure;
            int failure_code = 0;
            std::unique_ptr<JackLink> joined = join(host, request, &failure, &failure_code);
            std::unique_lock lock(attempt->mutex);
            attempt->done = true;
            if (attempt->abandoned) {
                // Kept for the next open of this client; left (the graph,
                // on this thread) if none takes it in time.
                attempt->link = std::move(joined);
                attempt->finished.wait_for(lock, kKeepLateJoin,
                                           [&] { return attempt->link == nullptr; });
                std::unique_ptr<JackLink> unclaimed = std::move(attempt->link);
                lock.unlock();
                unclaimed.reset();
                return;
            }
            attempt->link = std::move(joined);
            attempt->error = std::move(failure);
            attempt->code = failure_code;
            attempt->finished.notify_all();
        }).detach();
    } catch (const std::system_error&) {
        return refuse(error, code, "cannot start a thread to join JACK", -EAGAIN);
    }
    std::unique_lock lock(attempt->mutex);
    if (!attempt->finished.wait_until(lock, deadline, [&] { return attempt->done; })) {
        attempt->abandoned = true;
        lock.unlock();
        const std::lock_guard guard(g_pending_mutex);
        g_pending[request.server] = attempt;
        return refuse(error, code,
                      "JACK server '" + request.server + "' did not answer within " +
                          std::to_string(wait.count() / 1000) + " s (stopped, or shutting down?)",
                      -ENODEV);
    }
    if (!attempt->link) {
        return refuse(error, code, std::move(attempt->error), attempt->code);
    }
    lock.unlock();
    {
        const std::lock_guard guard(g_pending_mutex);
        g_opened_before.insert(key);
    }
    return std::move(attempt->link);
}

std::unique_ptr<JackLink> JackLink::join(const audiod_host* host, const JoinRequest& request,
                                         std::string* error, int* code) {
    const bool capture = request.capture;
    const std::string kind = capture ? "source" : "sink";
    std::unique_ptr<JackLink> link(new JackLink);
    link->host_ = host;
    link->capture_ = capture;
    link->channels_ = request.channels;
    link->quantum_ = request.quantum;
    link->rate_ = request.rate;
    link->server_ = request.server;
    link->client_name_ = request.client_name;

    // Before the client: from its open on, it may be failed (fail_for_reopen).
    if (sem_init(&link->wake_, 0, 0) != 0) {
        return refuse(error, code, "cannot make a semaphore", -errno);
    }
    link->wake_ready_ = true;
    jack_status_t status{};
    {
        // The last look before libjack's own, in one turn with it (see
        // libjack_clients.h): a server may have gone away since open()
        // waited, or a close said so.
        const OpenCloseTurn turn;
        const uint64_t losses_before = losses_so_far();
        if (!safe_to_open()) {
            return refuse(error, code,
                          "a JACK server went away just now, and a client of it is still open "
                          "(libjack would free it under this open)",
                          -EAGAIN);
        }
        // Never start a server (libjack would, by default, start jackd with
        // the user's settings) and never take another name: ports are
        // found by it.
        link->client_ = jack_client_open(
            link->client_name_.c_str(),
            static_cast<jack_options_t>(JackNoStartServer | JackUseExactName | JackServerName),
            &status, link->server_.c_str());
        if (link->client_ != nullptr) {
            note_client_opened(*link, losses_before);
        } else {
            // An open the server broke off ("JackSocketClientChannel read
            // fail", "Cannot open client") clears libjack's flag as a lost
            // server does, telling no callback: the open after it freed
            // every client the process had ("Cleanup client ref = 3") and
            // the server crashed closing one. Which failures do is
            // libjack's to know: any counts.
            note_server_lost();
        }
    }
    if (link->client_ == nullptr) {
        if ((status & JackServerFailed) != 0) {
            return refuse(error, code,
                          "no JACK server '" + link->server_ +
                              "' answers (is jackd running? `jackd -n NAME` names it; `server` "
                              "chooses it)",
                          -ENODEV);
        }
        // jackd2 reports a name already taken as a bare server error.
        return refuse(error, code,
                      "JACK server '" + link->server_ + "' refused a client named '" +
                          link->client_name_ + "' (JACK status " + std::to_string(status) +
                          "; is one of that name there already? client-name sets another)",
                      -ENODEV);
    }
    const jack_nframes_t jack_rate = jack_get_sample_rate(link->client_);
    if (jack_rate != request.rate) {
        return refuse(error, code,
                      "JACK server '" + link->server_ + "' runs at " + std::to_string(jack_rate) +
                          " Hz, not " + std::to_string(request.rate) + ": set rate = " +
                          std::to_string(jack_rate) + " for " + kind + " " + request.name,
                      -EINVAL);
    }
    link->period_.store(jack_get_buffer_size(link->client_), std::memory_order_relaxed);
    link->keep_ = request.latency_ms > 0
                      ? round_up(request.latency_ms * request.rate / 1000, request.quantum)
                      : 0;
    link->ring_ = std::make_unique<SpscQueue<float>>(
        std::bit_ceil(2 * (kMaxPeriod + std::max(link->keep_, kMaxPeriod) + request.quantum)) *
        size_t{request.channels});
    link->scratch_.assign(size_t{kMaxPeriod} * request.channels, 0.0F);
    for (uint32_t c = 0; c < request.channels; ++c) {
        const std::string port = (capture ? "in_" : "out_") + std::to_string(c + 1);
        jack_port_t* registered =
            jack_port_register(link->client_, port.c_str(), JACK_DEFAULT_AUDIO_TYPE,
                               capture ? JackPortIsInput : JackPortIsOutput, 0);
        if (registered == nullptr) {
            return refuse(error, code, "JACK would not register port " + port, -EIO);
        }
        link->ports_.push_back(registered);
    }

    // The ports `connect` names, found before the client joins the graph.
    link->connect_ = request.connect;
    link->direction_ = capture ? JackPortIsOutput : JackPortIsInput;
    link->peers_.resize(link->ports_.size());
    const std::string& connect = request.connect;
    if (connect != "physical" && connect != "none" && link->targets().empty()) {
        return refuse(
            error, code,
            "connect = \"" + connect + "\" names no JACK " + (capture ? "output" : "input") +
                " port; clients with such ports: " + client_names(link->client_, link->direction_),
            -ENODEV);
    }

    JackLink* self = link.get();
    // libjack's thread already exists, and hands over to it through JACK's
    // own shared-memory semaphores, which ThreadSanitizer cannot see: the
    // callback takes what was set up here through this flag instead.
    link->set_up_.store(true, std::memory_order_release);
    if (jack_set_process_callback(link->client_, on_process, self) != 0 ||
        jack_set_buffer_size_callback(link->client_, on_period_changed, self) != 0 ||
        jack_set_xrun_callback(link->client_, on_graph_xrun, self) != 0 ||
        jack_set_port_registration_callback(link->client_, on_port_registered, self) != 0 ||
        jack_set_port_connect_callback(link->client_, on_ports_connected, self) != 0) {
        return refuse(error, code, "JACK refused the client's callbacks", -EIO);
    }
    jack_on_info_shutdown(link->client_, on_gone, self);
    try {
        link->connector_ = std::thread([self] { self->follow_graph(); });
    } catch (const std::system_error&) {
        return refuse(error, code, "cannot start a thread to follow the JACK graph", -EAGAIN);
    }
    if (jack_activate(link->client_) != 0) {
        return refuse(error, code, "JACK would not activate client " + link->client_name_, -EIO);
    }
    link->connect_targets("");
    jack_latency_range_t range{};
    jack_port_get_latency_range(link->ports_.front(),
                                capture ? JackCaptureLatency : JackPlaybackLatency, &range);
    link->latency_ =
        (capture ? link->period_.load(std::memory_order_relaxed) : link->keep()) + range.max;
    return link;
}

JackLink::~JackLink() {
    if (client_ != nullptr) {
        note_client_closing(*this);
    }
    if (connector_.joinable()) {
        {
            const std::lock_guard lock(graph_mutex_);
            quit_ = true;
        }
        graph_wake_.notify_one();
        connector_.join();
    }
    if (client_ != nullptr) {
        // A server that stops tells its clients first (JACK's shutdown
        // notice, on the client's notification thread), then closes them,
        // and that thread reads on until it has, taking libjack's
        // process-wide synchro mutex for some notices. jack_client_close
        // cancels that thread asynchronously: caught holding the mutex, it
        // left it locked for good, and every later close or open in this
        // process waited on it for ever (a sink never came back after
        // jackd did: CI, and 2 of 30 release runs beside stress-ng). So
        // the close waits, bounded, for the thread that told to end.
        std::shared_future<void> teller;
        {
            const std::lock_guard lock(graph_mutex_);
            teller = teller_end_;
        }
        if (teller.valid() && teller.wait_for(kTellerEndWait) != std::future_status::ready &&
            host_ != nullptr && host_->log != nullptr) {
            host_->log(AUDIOD_LOG_WARNING, "jack",
                       "libjack's notice thread of a lost JACK server has not ended in 3 s; "
                       "closing its client anyway");
        }
        jack_deactivate(client_);
        {
            const OpenCloseTurn turn;
            jack_client_close(client_);
            note_client_closed();
        }
        // JACK calls no more; its last call is seen to end before the ring
        // and buffers go (as for set_up_, in a way a race detector sees).
        while (in_callback_.load(std::memory_order_acquire) != 0) {
            std::this_thread::yield();
        }
    }
    if (wake_ready_) {
        sem_destroy(&wake_);
    }
}

std::vector<std::string> JackLink::targets() const {
    if (connect_ == "none") {
        return {};
    }
    if (connect_ == "physical") {
        return list_ports(client_, nullptr, direction_ | JackPortIsPhysical);
    }
    return list_ports(client_, port_pattern(connect_).c_str(), direction_);
}

void JackLink::connect_targets(const std::string& only) {
    const std::vector<std::string> wanted = targets();
    for (size_t c = 0; c < ports_.size() && c < wanted.size(); ++c) {
        if (!only.empty() && wanted[c] != only) {
            continue;
        }
        const char* ours = jack_port_name(ports_[c]);
        const int r = capture_ ? jack_connect(client_, wanted[c].c_str(), ours)
                               : jack_connect(client_, ours, wanted[c].c_str());
        if (r != 0 && r != EEXIST) {
            if (host_ != nullptr && host_->log != nullptr) {
                host_->log(AUDIOD_LOG_WARNING, "jack",
                           ("cannot connect " + std::string(ours) + " and " + wanted[c]).c_str());
            }
            continue;
        }
        // Listed now, not when JACK's notice comes: JACK makes a connection
        // part of the graph at its next period, and a look at the sink
        // right after its open expects to find it.
        const std::lock_guard lock(graph_mutex_);
        std::vector<std::string>& peers = peers_[c];
        if (std::find(peers.begin(), peers.end(), wanted[c]) == peers.end()) {
            peers.push_back(wanted[c]);
        }
    }
}

void JackLink::follow_graph() {
    std::unique_lock lock(graph_mutex_);
    for (;;) {
        graph_wake_.wait(lock, [&] { return quit_ || !events_.empty(); });
        if (quit_) {
            return;
        }
        std::vector<GraphEvent> events;
        events.swap(events_);
        lock.unlock();
        for (const GraphEvent& event : events) {
            follow(event);
        }
        lock.lock();
    }
}

void JackLink::follow(const GraphEvent& event) {
    jack_port_t* a = jack_port_by_id(client_, event.a);
    if (a == nullptr) {
        return;
    }
    if (event.kind == GraphEvent::Kind::registered) {
        // Another client's port, which `connect` may name: a client that
        // came back (a sink of ours reopened, a synthesizer restarted).
        if (!jack_port_is_mine(client_, a) && connect_ != "none") {
            connect_targets(jack_port_name(a));
        }
        return;
    }
    jack_port_t* b = jack_port_by_id(client_, event.b);
    if (b == nullptr) {
        return;
    }
    for (size_t c = 0; c < ports_.size(); ++c) {
        const jack_port_t* peer = ports_[c] == a ? b : ports_[c] == b ? a : nullptr;
        if (peer == nullptr) {
            continue;
        }
        const std::string name = jack_port_name(peer);
        const std::lock_guard lock(graph_mutex_);
        std::vector<std::string>& peers = peers_[c];
        const auto at = std::find(peers.begin(), peers.end(), name);
        if (event.kind == GraphEvent::Kind::connected && at == peers.end()) {
            peers.push_back(name);
        } else if (event.kind == GraphEvent::Kind::disconnected && at != peers.end()) {
            peers.erase(at);
        }
    }
}

void JackLink::start() noexcept {
    started_.store(true, std::memory_order_release);
}

void JackLink::stop() noexcept {
    started_.store(false, std::memory_order_release);
    primed_.store(false, std::memory_order_relaxed);
}

uint32_t JackLink::keep() const noexcept {
    const uint32_t least = round_up(period_.load(std::memory_order_relaxed) + quantum_, quantum_);
    return std::max(keep_, least);
}

bool JackLink::ready() const noexcept {
    const size_t queued = ring_->size_approx() / channels_;
    return capture_ ? queued >= quantum_ : queued + quantum_ <= keep();
}

int JackLink::wait_for_quantum() noexcept {
    const int64_t slice_ns =
        (int64_t{2} * quantum_ * 1'000'000'000 / rate_ + kNoPeriodWaitNs) / kNoPeriodSlices;
    timespec deadline = monotonic_after(slice_ns);
    int silent_slices = 0;
    for (;;) {
        if (gone_.load(std::memory_order_acquire)) {
            return -ENODEV;
        }
        if (ready()) {
            return 0;
        }
        // Announce the wait, then look again: a period that ended in between
        // has either been seen here or will post the semaphore.
        waiting_.store(true, std::memory_order_seq_cst);
        if (ready() || gone_.load(std::memory_order_seq_cst)) {
            waiting_.store(false, std::memory_order_relaxed);
            continue;
        }
        if (sem_clockwait(&wake_, CLOCK_MONOTONIC, &deadline) != 0 && errno == ETIMEDOUT) {
            waiting_.store(false, std::memory_order_relaxed);
            if (ready()) {
                return 0;
            }
            if (++silent_slices == kNoPeriodSlices) {
                return -ETIMEDOUT;
            }
            deadline = monotonic_after(slice_ns);
        }
    }
}

void JackLink::write(const float* frames) noexcept {
    const size_t samples = size_t{quantum_} * channels_;
    if (ring_->try_push_n(frames, samples) < samples) {
        xruns_.fetch_add(1, std::memory_order_relaxed); // (wait_for_quantum makes room first)
    }
}

void JackLink::read(float* frames) noexcept {
    const size_t samples = size_t{quantum_} * channels_;
    const size_t got = ring_->try_pop_n(frames, samples);
    std::fill(frames + got, frames + samples, 0.0F);
}

// libjack ends a client's threads with an *asynchronous* pthread_cancel
// when it deactivates or closes the client. The forced unwind of a cancel
// that lands at an arbitrary instruction ends the whole server
// (std::terminate) in any frame whose C++ cleanup table does not cover that
// instruction, and ThreadSanitizer gives every function it instruments such
// a table, covering none of its own calls: TSan runs died so, as a failed
// jack source was closed (a CI run, then a stress pass). So each entry turns
// cancellation off for the length of the call. A cancel sent meanwhile acts
// when it is turned back on, inside pthread_setcancelstate, and unwinds
// through frames without cleanup tables only: cancel_back_on and this entry
// (no object with a destructor, no instrumentation) and libjack's own. And the destructor's
// wait for the callback to end is never left waiting for one that was
// cancelled half-way.
JACK_ENTRY int JackLink::on_process(jack_nframes_t frames, void* self) {
    const int cancel_state = cancel_off();
    static_cast<JackLink*>(self)->process(frames);
    cancel_back_on(cancel_state);
    return 0;
}

JACK_ENTRY int JackLink::on_period_changed(jack_nframes_t frames, void* self) {
    const int cancel_state = cancel_off();
    static_cast<JackLink*>(self)->period_changed(frames);
    cancel_back_on(cancel_state);
    return 0;
}

JACK_ENTRY int JackLink::on_graph_xrun(void* self) {
    const int cancel_state = cancel_off();
    static_cast<JackLink*>(self)->graph_xrun();
    cancel_back_on(cancel_state);
    return 0;
}

JACK_ENTRY void JackLink::on_gone(jack_status_t, const char*, void* self) {
    const int cancel_state = cancel_off();
    static_cast<JackLink*>(self)->gone();
    cancel_back_on(cancel_state);
}

JACK_ENTRY void JackLink::on_port_registered(jack_port_id_t port, int registered, void* self) {
    const int cancel_state = cancel_off();
    if (registered != 0) {
        static_cast<JackLink*>(self)->graph_changed({GraphEvent::Kind::registered, port, port});
    }
    cancel_back_on(cancel_state);
}

JACK_ENTRY void JackLink::on_ports_connected(jack_port_id_t a, jack_port_id_t b, int connected,
                                             void* self) {
    const int cancel_state = cancel_off();
    static_cast<JackLink*>(self)->graph_changed(
        {connected != 0 ? GraphEvent::Kind::connected : GraphEvent::Kind::disconnected, a, b});
    cancel_back_on(cancel_state);
}

void JackLink::graph_changed(const GraphEvent& event) {
    {
        const std::lock_guard lock(graph_mutex_);
        events_.push_back(event);
    }
    graph_wake_.notify_one();
}

void JackLink::process(jack_nframes_t frames) {
    // Seen by the destructor, which waits for the last call to end (the
    // entry's sanitizer-blind code would hide this from ThreadSanitizer).
    in_callback_.fetch_add(1, std::memory_order_acquire);
    if (set_up_.load(std::memory_order_acquire)) {
        count_skipped_cycles(frames);
        if (capture_) {
            capture(frames);
        } else {
            play(frames);
        }
        wake();
    }
    in_callback_.fetch_sub(1, std::memory_order_release);
}

void JackLink::count_skipped_cycles(jack_nframes_t frames) {
    // JACK's xrun callback comes later, from its notification thread, and
    // not for every cycle it skipped; the frame time of this cycle tells at
    // once. A cycle of the graph that did not run between this call and the
    // last lost or repeated a period between clients (a client late, jackd
    // running its graph behind): an xrun of this link, once audio moves.
    const jack_nframes_t begun = jack_last_frame_time(client_);
    const bool moving = started_.load(std::memory_order_acquire);
    if (moved_last_cycle_ && moving && begun != next_cycle_) {
        // JACK may have reported it already (graph_xrun): then it counted.
        const uint64_t report = unmatched_report_.exchange(0, std::memory_order_acq_rel);
        if (!same_xrun(report, begun)) {
            xruns_.fetch_add(1, std::memory_order_relaxed);
            unreported_skip_.store(kMarked | begun, std::memory_order_release);
        }
    }
    moved_last_cycle_ = moving;
    next_cycle_ = begun + frames;
}

bool JackLink::same_xrun(uint64_t marked, jack_nframes_t now) const noexcept {
    if ((marked & kMarked) == 0) {
        return false;
    }
    // Frame times wrap (a day at 48 kHz); their difference does not. A
    // report's time is JACK's estimate of now, which may be past the
    // start of the cycle whose call then finds the skip: either sign.
    const auto apart = static_cast<int32_t>(now - static_cast<jack_nframes_t>(marked));
    return std::abs(int64_t{apart}) <= int64_t{rate_} / 10;
}

void JackLink::play(jack_nframes_t frames) {
    const size_t samples = size_t{frames} * channels_;
    size_t got = 0;
    if (frames <= kMaxPeriod && started_.load(std::memory_order_acquire)) {
        got = ring_->try_pop_n(scratch_.data(), samples);
        if (got == samples) {
            primed_.store(true, std::memory_order_relaxed);
        } else if (primed_.load(std::memory_order_relaxed)) {
            xruns_.fetch_add(1, std::memory_order_relaxed); // the ring ran dry
        }
    }
    for (uint32_t c = 0; c < channels_; ++c) {
        copy_into_jack_port(static_cast<float*>(jack_port_get_buffer(ports_[c], frames)), frames,
                            scratch_.data() + c, got / channels_, channels_);
    }
}

void JackLink::capture(jack_nframes_t frames) {
    if (frames > kMaxPeriod || !started_.load(std::memory_order_acquire)) {
        return;
    }
    for (uint32_t c = 0; c < channels_; ++c) {
        copy_out_of_jack_port(static_cast<const float*>(jack_port_get_buffer(ports_[c], frames)),
                              frames, scratch_.data() + c, channels_);
    }
    const size_t samples = size_t{frames} * channels_;
    if (ring_->try_push_n(scratch_.data(), samples) < samples) {
        xruns_.fetch_add(1, std::memory_order_relaxed); // the RT thread fell behind
    }
}

void JackLink::wake() {
    if (waiting_.exchange(false, std::memory_order_acq_rel)) {
        sem_post(&wake_);
    }
}

void JackLink::period_changed(jack_nframes_t frames) {
    period_.store(frames, std::memory_order_relaxed);
}

void JackLink::graph_xrun() {
    // The skip count_skipped_cycles counted just before is this report's
    // xrun: counted once. Else it counts, and a skip found after it is its.
    const jack_nframes_t now = jack_frame_time(client_);
    if (same_xrun(unreported_skip_.exchange(0, std::memory_order_acq_rel), now)) {
        return;
    }
    xruns_.fetch_add(1, std::memory_order_relaxed);
    unmatched_report_.store(kMarked | now, std::memory_order_release);
}

void JackLink::gone() {
    {
        const std::lock_guard lock(graph_mutex_);
        if (!teller_end_.valid()) {
            teller_end_ = end_of_this_thread();
        }
    }
    note_server_lost();
    fail_for_reopen();
}

bool JackLink::fail_for_reopen() noexcept {
    if (gone_.exchange(true, std::memory_order_seq_cst)) {
        return false;
    }
    waiting_.store(false, std::memory_order_relaxed);
    sem_post(&wake_);
    return true;
}

size_t JackLink::describe(char* text, size_t size) const noexcept {
    const uint32_t period = period_.load(std::memory_order_relaxed);
    std::string connected;
    {
        const std::lock_guard lock(graph_mutex_);
        for (const std::vector<std::string>& peers : peers_) {
            for (const std::string& peer : peers) {
                connected += (connected.empty() ? "" : ",") + peer;
            }
        }
    }
    const int n = std::snprintf(
        text, size,
        "jack-server=%s\njack-client=%s\nconnected-to=%s\njack-period=%u\nbuffer-ms=%.1f\n",
        server_.c_str(), client_name_.c_str(), connected.empty() ? "-" : connected.c_str(), period,
        (capture_ ? period : keep()) * 1000.0 / rate_);
    return n < 0 ? 0 : std::min(static_cast<size_t>(n), size > 0 ? size - 1 : 0);
}

void close_link(std::unique_ptr<JackLink> link) {
    const audiod_host* host = link->host();
    std::promise<void> closed;
    std::future<void> done = closed.get_future();
    try {
        std::thread([owned = std::move(link), closed = std::move(closed)]() mutable {
            owned.reset();
            closed.set_value();
        }).detach();
    } catch (const std::system_error&) {
        return; // no thread: the link was closed here, as the thread would have
    }
    if (done.wait_for(std::chrono::milliseconds(500)) != std::future_status::ready &&
        host != nullptr && host->log != nullptr) {
        host->log(AUDIOD_LOG_WARNING, "jack",
                  "a JACK client did not close within 500 ms; left to a thread of its own");
    }
}

} // namespace audiod::jack
