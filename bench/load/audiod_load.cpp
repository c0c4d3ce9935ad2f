// audiod-load: plays N concurrent streams against a running audiod for T
// seconds, each from its own thread as separate players would, and prints
// what it cost: the server's and the clients' CPU, their context switches
// (wake-ups) and the streams' underruns.
//
//   audiod-load [--streams N] [--seconds T] [--latency-ms L] [--csv]
#include "audiod/audiod.h"
#include "proc_stats.h"
#include "protocol/messages.h"
#include "protocol/request_channel.h"
#include "protocol/socket_path.h"
#include "tone.h"

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <sys/resource.h>
#include <thread>
#include <unistd.h>
#include <vector>

namespace {

struct Options {
    int streams = 8;
    double seconds = 10;
    uint32_t latency_ms = 100;
    bool csv = false;
};

// The sum of every sink's xrun counter.
uint64_t total_xruns(audiod::proto::RequestChannel& channel) {
    audiod::proto::SinkList sinks;
    if (channel.call_for(audiod::proto::ListSinks{}, &sinks, audiod::Deadline::after_ms(2000)) !=
        0) {
        return 0;
    }
    uint64_t total = 0;
    for (const auto& sink : sinks.sinks) {
        total += sink.xruns;
    }
    return total;
}

std::atomic<int64_t> g_longest_write_us{0};

// One player: a stream fed with a tone by blocking writes, until `stop`.
void player(int index, const Options& options, std::atomic<bool>& stop,
            std::atomic<unsigned long long>& underruns, std::atomic<int>& failures) {
    audiod_stream_timing timing{};
    audiod_context* ctx = nullptr;
    const std::string app = "load-" + std::to_string(index);
    if (audiod_connect(app.c_str(), -1, &ctx) != 0) {
        failures.fetch_add(1);
        return;
    }
    uint32_t rate = 48000;
    uint32_t channels = 2;
    audiod_server_format(ctx, &rate, &channels);
    audiod_stream_params params;
    audiod_stream_params_init(&params);
    params.rate = rate;
    params.channels = channels;
    params.latency_ms = options.latency_ms;
    audiod_stream* stream = nullptr;
    if (audiod_stream_create(ctx, &params, &stream) != 0) {
        failures.fetch_add(1);
        audiod_disconnect(ctx);
        return;
    }
    audiod::ToneGenerator tone(220.0 + index, 0.01, rate, channels);
    const size_t chunk = rate / 50; // 20 ms per write, like a typical player
    std::vector<int16_t> buffer(chunk * channels);
    while (!stop.load(std::memory_order_relaxed)) {
        tone.fill_s16(buffer.data(), chunk);
        size_t done = 0;
        while (done < chunk && !stop.load(std::memory_order_relaxed)) {
            const auto began = std::chrono::steady_clock::now();
            const long n =
                audiod_stream_write(stream, buffer.data() + done * channels, chunk - done, 500);
            const int64_t us = std::chrono::duration_cast<std::chrono::microseconds>(
                                   std::chrono::steady_clock::now() - began)
                                   .count();
            int64_t longest = g_longest_write_us.load();
            while (us > longest && !g_longest_write_us.compare_exchange_weak(longest, us)) {
            }
            if (n < 0 && n != AUDIOD_E_TIMEOUT) {
                failures.fetch_add(1);
                stop.store(true);
                break;
            }
            done += n > 0 ? static_cast<size_t>(n) : 0;
            audiod_stream_get_timing(stream, &timing);
            underruns.store(timing.underruns);
        }
    }
    audiod_stream_close(stream);
    audiod_disconnect(ctx);
}

double client_cpu_seconds() {
    rusage usage{};
    ::getrusage(RUSAGE_SELF, &usage);
    return usage.ru_utime.tv_sec + usage.ru_stime.tv_sec +
           (usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) / 1e6;
}

} // namespace

int main(int argc, char** argv) {
    Options options;
    for (int i = 1; i < argc; ++i) {
        const std::string arg = argv[i];
        const char* value = i + 1 < argc ? argv[i + 1] : nullptr;
        if (arg == "--streams" && value) {
            options.streams = std::atoi(value);
            ++i;
        } else if (arg == "--seconds" && value) {
            options.seconds = std::atof(value);
            ++i;
        } else if (arg == "--latency-ms" && value) {
            options.latency_ms = static_cast<uint32_t>(std::atoi(value));
            ++i;
        } else if (arg == "--csv") {
            options.csv = true;
        } else {
            std::fprintf(stderr, "usage: audiod-load [--streams N] [--seconds T] [--latency-ms L] "
                                 "[--csv]\n");
            return 2;
        }
    }

    // The server's pid and quantum, to measure it from /proc.
    audiod::proto::ServerInfo info;
    audiod::proto::HelloReply hello;
    audiod::proto::RequestChannel info_channel;
    if (info_channel.connect(audiod::default_socket_path()) != 0 ||
        info_channel.call_for(audiod::proto::Hello{}, &hello, audiod::Deadline::after_ms(2000)) !=
            0 ||
        info_channel.call_for(audiod::proto::GetInfo{}, &info, audiod::Deadline::after_ms(2000)) !=
            0) {
        std::fprintf(stderr, "audiod-load: no server\n");
        return 1;
    }
    const pid_t server = static_cast<pid_t>(info.pid);

    std::atomic<bool> stop{false};
    std::atomic<int> failures{0};
    // Each player publishes its stream's underrun count after every write,
    // so the window measured below can be told apart from start and end.
    std::vector<std::atomic<unsigned long long>> underruns(static_cast<size_t>(options.streams));
    std::vector<std::thread> players;
    for (int i = 0; i < options.streams; ++i) {
        players.emplace_back(player, i, std::cref(options), std::ref(stop),
                             std::ref(underruns[static_cast<size_t>(i)]), std::ref(failures));
    }
    const auto total_underruns = [&] {
        unsigned long long total = 0;
        for (const auto& count : underruns) {
            total += count.load();
        }
        return total;
    };
    // Let every stream prebuffer and settle before measuring.
    std::this_thread::sleep_for(std::chrono::milliseconds(1000));
    const uint64_t xruns_before = total_xruns(info_channel);
    const unsigned long long underruns_before = total_underruns();
    g_longest_write_us.store(0);
    const auto server_before = audiod::bench::read_proc_stats(server);
    const auto client_before = audiod::bench::read_proc_stats(::getpid());
    const double client_cpu_before = client_cpu_seconds();
    const auto start = std::chrono::steady_clock::now();
    std::this_thread::sleep_for(std::chrono::duration<double>(options.seconds));
    const double elapsed =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    const auto server_after = audiod::bench::read_proc_stats(server);
    const auto client_after = audiod::bench::read_proc_stats(::getpid());
    const double client_cpu = client_cpu_seconds() - client_cpu_before;
    const unsigned long long window_underruns = total_underruns() - underruns_before;
    const uint64_t xruns = total_xruns(info_channel) - xruns_before;
    const double longest_write_ms = static_cast<double>(g_longest_write_us.load()) / 1000.0;
    stop.store(true);
    for (auto& t : players) {
        t.join();
    }

    const double server_cpu = server_after.cpu_seconds - server_before.cpu_seconds;
    const double server_pct = 100.0 * server_cpu / elapsed;
    const double client_pct = 100.0 * client_cpu / elapsed;
    const double server_wakeups =
        static_cast<double>(server_after.switches - server_before.switches) / elapsed;
    const double client_wakeups =
        static_cast<double>(client_after.switches - client_before.switches) / elapsed;
    const auto xrun_count = static_cast<unsigned long long>(xruns);
    if (options.csv) {
        std::printf("%u,%d,%.1f,%.2f,%.3f,%.2f,%.3f,%.0f,%.0f,%llu,%llu,%.1f,%d\n", info.quantum,
                    options.streams, elapsed, server_pct, server_pct / options.streams, client_pct,
                    client_pct / options.streams, server_wakeups, client_wakeups, window_underruns,
                    xrun_count, longest_write_ms, failures.load());
    } else {
        std::printf("quantum %u, %d streams, %.1f s, client buffers %u ms\n", info.quantum,
                    options.streams, elapsed, options.latency_ms);
        std::printf("  server:  %6.2f %% of a core (%.3f %% per stream), %8.0f wake-ups/s\n",
                    server_pct, server_pct / options.streams, server_wakeups);
        std::printf("  clients: %6.2f %% of a core (%.3f %% per stream), %8.0f wake-ups/s\n",
                    client_pct, client_pct / options.streams, client_wakeups);
        std::printf("  total:   %6.2f %% of a core; underruns %llu; xruns %llu; longest write "
                    "%.1f ms; failures %d\n",
                    server_pct + client_pct, window_underruns, xrun_count, longest_write_ms,
                    failures.load());
    }
    return failures.load() == 0 ? 0 : 1;
}
