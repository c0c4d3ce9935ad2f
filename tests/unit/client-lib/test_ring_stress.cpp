// The shared-memory ring under two threads: libaudiod's real write path
// (audiod_stream_write, blocking on the eventfd: on the edges of its epoll
// set, as a player does, or with poll, as it does once the player has taken
// the descriptor) feeds a real Device whose RT thread reads it as fast as
// the test lets it cycle. ThreadSanitizer runs this in the sanitizer build;
// every frame must arrive once, in order.
#include "client_internal.h"
#include "unit/server/stepped_sink.h"
#include "waiting.h"

#include <boost/test/unit_test.hpp>

#include <atomic>
#include <fstream>
#include <poll.h>
#include <random>
#include <string>
#include <sys/socket.h>
#include <sys/timerfd.h>
#include <thread>
#include <time.h>
#include <unistd.h>

using namespace audiod;
using namespace audiod::test;

namespace {

// A client-side stream over a ring created in this process, bound the way
// audiod_stream_create binds the server's reply.
struct LocalClient {
    LocalClient(Stream& server_side, uint32_t wake_frames, uint32_t rate = 48000) {
        int fds[2];
        BOOST_REQUIRE(::socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, fds) == 0);
        context.channel = proto::RequestChannel(UniqueFd(fds[0]));
        context.socket_fd.store(fds[0]);
        client::watch_for_hangup(context);
        BOOST_REQUIRE(context.hangup_epoll);
        peer.reset(fds[1]);
        auto core = std::make_shared<client::StreamCore>();
        core->context = &context;
        core->format = AUDIOD_FORMAT_S16LE;
        core->rate = rate;
        core->channels = 2;
        core->frame_bytes = 4;
        core->keep_clock = false;
        proto::StreamCreated created;
        created.stream_id = server_side.id;
        created.capacity_frames = server_side.ring.capacity();
        created.memory_bytes = server_side.ring.memory_bytes();
        created.quantum = 64;
        client::ServerStream fresh;
        BOOST_REQUIRE_EQUAL(fresh.ring.map(created, server_side.ring.memfd(), 4), 0);
        core->wake_fd.reset(::dup(server_side.wake_fd.get()));
        client::make_wait_epoll(*core);
        BOOST_REQUIRE(core->wait_epoll);
        fresh.wake.reset(::dup(core->wake_fd.get()));
        BOOST_REQUIRE(client::rebind(*core, std::move(fresh)));
        stream.core = core;
        BOOST_REQUIRE_EQUAL(audiod_stream_set_wakeup_frames(&stream, wake_frames), 0);
    }

    audiod_context context;
    audiod_stream stream;
    UniqueFd peer;
};

} // namespace

BOOST_AUTO_TEST_SUITE(ring_stress)

namespace {

void writer_and_rt_reader_lose_nothing(bool player_polls) {
    constexpr uint32_t kQuantum = 64;
    SinkRig rig({48000, 2, kQuantum});
    Stream& server_side = rig.add_stream(SampleFormat::s16le, 1000);
    LocalClient client(server_side, 300);
    BOOST_REQUIRE(client::waits_on_edges(*client.stream.core));
    if (player_polls) {
        BOOST_REQUIRE_GE(audiod_stream_fd(&client.stream), 0);
        BOOST_REQUIRE(!client::waits_on_edges(*client.stream.core));
    }

    constexpr uint64_t kFrames = 400'000;
    std::atomic<bool> writer_done{false};
    std::atomic<long> writer_error{0};
    std::thread writer([&] {
        std::mt19937 rng(3);
        std::vector<int16_t> chunk;
        uint64_t next = 0;
        while (next < kFrames) {
            const uint64_t n = std::min<uint64_t>(1 + rng() % 700, kFrames - next);
            chunk.resize(n * 2);
            for (uint64_t i = 0; i < n; ++i) {
                chunk[2 * i] = chunk[2 * i + 1] = static_cast<int16_t>((next + i) % 30000 + 1);
            }
            uint64_t done = 0;
            while (done < n) {
                const long w =
                    audiod_stream_write(&client.stream, chunk.data() + 2 * done, n - done, 5000);
                if (w < 0) {
                    writer_error.store(w);
                    writer_done.store(true);
                    return;
                }
                done += static_cast<uint64_t>(w);
            }
            next += n;
        }
        writer_error.store(audiod_stream_drain(&client.stream, 10000));
        writer_done.store(true);
    });

    // Cycle as fast as the RT thread can go until the writer has finished.
    while (!writer_done.load()) {
        rig.run_cycles(50);
    }
    writer.join();
    BOOST_REQUIRE_EQUAL(writer_error.load(), 0);

    const auto out = rig.output<int16_t>();
    uint64_t expected = 0;
    for (size_t f = 0; f < out.size() / 2; ++f) {
        if (out[2 * f] == 0) {
            continue; // an underrun: the writer was not scheduled in time
        }
        BOOST_REQUIRE_EQUAL(out[2 * f], static_cast<int16_t>(expected % 30000 + 1));
        BOOST_REQUIRE_EQUAL(out[2 * f + 1], out[2 * f]);
        ++expected;
    }
    BOOST_CHECK_EQUAL(expected, kFrames);
    BOOST_CHECK_EQUAL(server_side.ring.header()->server_pos.load(), kFrames);
}

} // namespace

BOOST_AUTO_TEST_CASE(writer_on_edges_and_rt_reader_lose_nothing) {
    writer_and_rt_reader_lose_nothing(false);
}

BOOST_AUTO_TEST_CASE(writer_with_poll_and_rt_reader_lose_nothing) {
    writer_and_rt_reader_lose_nothing(true);
}

// A writer waiting on a full ring learns at once that the server hung up:
// the hang-up set is in its epoll set beside the eventfd.
BOOST_AUTO_TEST_CASE(a_writer_waiting_on_edges_sees_the_server_hang_up) {
    SinkRig rig({48000, 2, 64});
    Stream& server_side = rig.add_stream(SampleFormat::s16le, 100);
    LocalClient client(server_side, 64);
    std::vector<int16_t> frames(2 * 48000, 1);
    std::atomic<long> result{1};
    std::atomic<bool> waiting{false};
    const auto start = MonoClock::now();
    std::thread writer([&] {
        waiting.store(true);
        // More than the ring holds, and nobody consumes: it waits.
        result.store(audiod_stream_write(&client.stream, frames.data(), 48000, 20000));
    });
    while (!waiting.load() ||
           client.stream.core->ring.header()->client_pos.load() < server_side.ring.capacity()) {
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    client.peer.reset(); // the server goes
    writer.join();
    const auto waited = MonoClock::now() - start;
    // What was written before the hang-up counts; the deadline was 20 s.
    BOOST_CHECK_EQUAL(result.load(), static_cast<long>(server_side.ring.capacity()));
    BOOST_CHECK_LT(waited, std::chrono::seconds(10));
    BOOST_CHECK(client.context.connection_lost.load());
}

// A replaced connection leaves the hang-up set even where its socket lives
// on in another process (a player's forked child): the old server's
// hang-up must not end the waits that the new server's wake-ups end.
BOOST_AUTO_TEST_CASE(a_replaced_connection_leaves_the_hang_up_set) {
    SinkRig rig({48000, 2, 64});
    Stream& server_side = rig.add_stream(SampleFormat::s16le, 100);
    LocalClient client(server_side, 64);
    audiod_context& context = client.context;
    const UniqueFd childs_copy(::dup(context.channel.fd()));
    int fds[2];
    BOOST_REQUIRE(::socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, fds) == 0);
    UniqueFd new_peer(fds[1]);
    client::unwatch_hangup(context); // as the supervisor's reconnect does
    context.channel = proto::RequestChannel(UniqueFd(fds[0]));
    client::watch_for_hangup(context);
    client.peer.reset(); // the old server is gone
    std::vector<int16_t> frames(2 * 48000, 1);
    // Nobody consumes and nothing hangs up: the write waits out its 300 ms.
    const long written = audiod_stream_write(&client.stream, frames.data(), 48000, 300);
    BOOST_CHECK_EQUAL(written, static_cast<long>(server_side.ring.capacity()));
    BOOST_CHECK(!context.connection_lost.load());
}

namespace {

// The calling thread's CPU time.
std::chrono::nanoseconds thread_cpu() {
    timespec t{};
    ::clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
    return std::chrono::seconds(t.tv_sec) + std::chrono::nanoseconds(t.tv_nsec);
}

// How many times a thread of this process has slept and been woken.
uint64_t voluntary_switches(pid_t tid) {
    std::ifstream status("/proc/self/task/" + std::to_string(tid) + "/status");
    std::string line;
    while (std::getline(status, line)) {
        if (line.rfind("voluntary_ctxt_switches:", 0) == 0) {
            return std::stoull(line.substr(line.find(':') + 1));
        }
    }
    BOOST_FAIL("no voluntary_ctxt_switches for thread " << tid);
    return 0;
}

// A sink cycling at its real pace (8 ms: 64 frames at 8 kHz, long enough
// for a loaded machine under a sanitizer to keep up) and a writer of a
// 2.25-cycle ring that times itself from the cycles the sink publishes:
// blocked in audiod_stream_write on the edges of its epoll set, with the
// library's half-ring threshold; or, as the ALSA plugin does, polling the
// stream's descriptor beside a timer of its own that
// audiod_stream_next_wakeup sets, with a threshold of one period.
struct PacedSelfTimedWriter {
    static constexpr uint32_t kRate = 8000;
    static constexpr uint32_t kQuantum = 64;
    static constexpr std::chrono::milliseconds kPeriod{8};
    enum class Wait { blocked, polls_with_own_timer };

    explicit PacedSelfTimedWriter(uint64_t frames, Wait how = Wait::blocked)
        : total(frames)
        , wait(how)
        , rig({kRate, 2, kQuantum})
        , server_side(rig.add_stream(SampleFormat::s16le, 144))
        , client(server_side, how == Wait::blocked ? 72 : kQuantum, kRate) {
        BOOST_REQUIRE(client::waits_on_edges(*client.stream.core));
        if (how == Wait::polls_with_own_timer) {
            stream_fd = audiod_stream_fd(&client.stream);
            timer.reset(::timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC));
            BOOST_REQUIRE(stream_fd >= 0 && timer);
        }
        writer = std::thread([this] { write_all(); });
    }
    ~PacedSelfTimedWriter() {
        if (writer.joinable()) {
            writer.join();
        }
    }

    // Frame n of the sequence, never silence.
    static int16_t sample(uint64_t n) { return static_cast<int16_t>(n % 30000 + 1); }

    void write_all() {
        tid.store(static_cast<pid_t>(::gettid()));
        const auto cpu_before = thread_cpu();
        std::vector<int16_t> chunk(2 * 40);
        uint64_t next = 0;
        while (next < total) {
            const uint64_t n = std::min<uint64_t>(40, total - next);
            for (uint64_t i = 0; i < n; ++i) {
                chunk[2 * i] = chunk[2 * i + 1] = sample(next + i);
            }
            const long w = wait == Wait::blocked
                               ? audiod_stream_write(&client.stream, chunk.data(), n, 5000)
                               : write_polling(chunk.data(), n);
            if (w != static_cast<long>(n)) {
                error.store(w < 0 ? w : -1000);
                break;
            }
            next += n;
        }
        writer_cpu.store(thread_cpu() - cpu_before);
        written.store(true);
        while (!drain_allowed.load()) { // drain reads the eventfd: take_signals first
            std::this_thread::sleep_for(std::chrono::milliseconds(1));
        }
        if (error.load() == 0) {
            error.store(audiod_stream_drain(&client.stream, 10000));
        }
        done.store(true);
    }

    // Writes n frames the ALSA plugin's way: what fits at once, then a poll
    // of the stream's descriptor and the timer, armed for the cycle that
    // makes room (or, where none is foreseen, the plugin's 50 ms net).
    long write_polling(const int16_t* data, uint64_t n) {
        uint64_t done = 0;
        while (done < n) {
            const long w = audiod_stream_write(&client.stream, data + 2 * done, n - done, 0);
            if (w > 0) {
                done += static_cast<uint64_t>(w);
                continue;
            }
            if (w != AUDIOD_E_AGAIN) {
                return w;
            }
            uint64_t at = 0;
            if (audiod_stream_next_wakeup(&client.stream, &at) != 0) {
                return -2000;
            }
            itimerspec spec{};
            int flags = 0;
            if (at != 0) {
                spec.it_value.tv_sec = static_cast<time_t>(at / 1'000'000'000);
                spec.it_value.tv_nsec = static_cast<long>(at % 1'000'000'000);
                flags = TFD_TIMER_ABSTIME;
            } else {
                spec.it_value.tv_nsec = 50'000'000;
            }
            ::timerfd_settime(timer.get(), flags, &spec, nullptr);
            pollfd fds[2] = {{stream_fd, POLLIN, 0}, {timer.get(), POLLIN, 0}};
            if (::poll(fds, 2, 5000) <= 0) {
                return -3000;
            }
            if ((fds[0].revents & POLLIN) != 0) {
                signals_seen.fetch_add(1);
                audiod_stream_ack_wakeup(&client.stream);
            }
        }
        return static_cast<long>(n);
    }

    // Runs one cycle per period from now until `stop` says so.
    template <class Stop>
    void cycle_paced(Stop stop) {
        auto next = std::chrono::steady_clock::now();
        while (!stop()) {
            rig.run_cycles(1);
            ++cycles;
            next += kPeriod;
            std::this_thread::sleep_until(next);
        }
    }

    // The server's signals to the writer since the last call. (Waiting on
    // the edges of its epoll set, the writer never reads the eventfd.)
    uint64_t take_signals() {
        uint64_t count = 0;
        return ::read(server_side.wake_fd.get(), &count, sizeof count) == sizeof count ? count : 0;
    }

    void check_every_frame_arrived_in_order() {
        BOOST_REQUIRE_EQUAL(error.load(), 0);
        const auto out = rig.output<int16_t>();
        uint64_t expected = 0;
        for (size_t f = 0; f < out.size() / 2; ++f) {
            if (out[2 * f] == 0) {
                continue; // an underrun: the writer came too late
            }
            BOOST_REQUIRE_EQUAL(out[2 * f], sample(expected));
            BOOST_REQUIRE_EQUAL(out[2 * f + 1], out[2 * f]);
            ++expected;
        }
        BOOST_CHECK_EQUAL(expected, total);
    }

    const uint64_t total;
    const Wait wait;
    SinkRig rig;
    Stream& server_side;
    LocalClient client;
    uint64_t cycles = 0;
    std::atomic<pid_t> tid{0};
    std::atomic<long> error{0};
    std::atomic<bool> written{false};
    std::atomic<bool> drain_allowed{false};
    std::atomic<bool> done{false};
    std::atomic<std::chrono::nanoseconds> writer_cpu{};
    int stream_fd = -1;
    UniqueFd timer;
    std::atomic<uint64_t> signals_seen{0}; // by a poller: the descriptor found readable
    std::thread writer;
};

} // namespace

// The writer wakes itself after each cycle and the server, which would
// otherwise signal it every cycle (its queue falls below two cycles'
// worth each time), signals it only when a wake-up of its own came late.
BOOST_AUTO_TEST_CASE(a_self_timed_writer_loses_nothing_and_the_server_seldom_signals_it) {
    PacedSelfTimedWriter run(200 * PacedSelfTimedWriter::kQuantum); // 1.6 s
    run.cycle_paced([&] { return run.written.load(); });
    const uint64_t signals = run.take_signals();
    const uint64_t cycles = run.cycles;
    run.drain_allowed.store(true);
    run.cycle_paced([&] { return run.done.load(); });
    run.writer.join();
    run.check_every_frame_arrived_in_order();
    BOOST_TEST_MESSAGE(cycles << " cycles, " << signals << " signals, writer CPU "
                              << run.writer_cpu.load().count() / 1000 << " us");
    BOOST_CHECK_LT(signals, cycles / 4);
    BOOST_CHECK(run.client.stream.core->ring.header()->client_flags.load() & kClientFlagSelfTimed);
    // Its own clock never makes it spin: most of the 1.6 s it sleeps.
    BOOST_CHECK_LT(run.writer_cpu.load(), std::chrono::milliseconds(800));
}

// The same, waiting the ALSA plugin's way, with a threshold of one period
// (crossed every cycle): the server seldom signals the descriptor.
BOOST_AUTO_TEST_CASE(a_poller_with_its_own_timer_loses_nothing_and_is_seldom_signalled) {
    PacedSelfTimedWriter run(200 * PacedSelfTimedWriter::kQuantum,
                             PacedSelfTimedWriter::Wait::polls_with_own_timer);
    run.cycle_paced([&] { return run.written.load(); });
    const uint64_t signals = run.signals_seen.load();
    const uint64_t cycles = run.cycles;
    run.drain_allowed.store(true);
    run.cycle_paced([&] { return run.done.load(); });
    run.writer.join();
    run.check_every_frame_arrived_in_order();
    BOOST_TEST_MESSAGE(cycles << " cycles, " << signals << " signals seen by the poller");
    BOOST_CHECK_LT(signals, cycles / 4);
    BOOST_CHECK_LT(run.writer_cpu.load(), std::chrono::milliseconds(800));
}

// The server stops taking from the ring (here: stops cycling) while the
// writer waits on a full one: after a few periods of looking by its own
// clock, the writer waits for the server's signal, and goes on when the
// cycles come back.
BOOST_AUTO_TEST_CASE(a_self_timed_writer_sleeps_while_the_server_stops_and_goes_on_after) {
    PacedSelfTimedWriter run(80 * PacedSelfTimedWriter::kQuantum);
    run.cycle_paced([&] { return run.cycles == 20; });
    while (run.client.stream.core->ring.header()->client_pos.load() -
               run.server_side.ring.header()->server_pos.load() <
           run.server_side.ring.capacity()) {
        std::this_thread::sleep_for(std::chrono::milliseconds(1)); // the writer fills the ring
    }
    const uint64_t switches_before = voluntary_switches(run.tid.load());
    std::this_thread::sleep_for(std::chrono::seconds(1)); // 125 periods without a cycle
    const uint64_t switches = voluntary_switches(run.tid.load()) - switches_before;
    BOOST_TEST_MESSAGE("writer woken " << switches << " times in 1 s without cycles");
    // A look every quarter period for the three periods after the last
    // cycle, then none.
    BOOST_CHECK_LE(switches, 16u);
    BOOST_CHECK(!run.written.load());
    run.drain_allowed.store(true);
    run.cycle_paced([&] { return run.done.load(); });
    run.writer.join();
    run.check_every_frame_arrived_in_order();
}

BOOST_AUTO_TEST_SUITE_END()
