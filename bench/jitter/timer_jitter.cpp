// audiod-timer-jitter: the machine's own baseline for real-time deadlines.
// A SCHED_FIFO thread (when permitted) sleeps to absolute deadlines one
// quantum apart, exactly as a timer-paced sink does, with nothing else to
// do, and counts how often it wakes more than a quantum late. Whatever this
// shows, no audio server on the same machine can beat; run it beside
// run-rt.sh to read audiod's xruns fairly.
//   audiod-timer-jitter [--quantum FRAMES] [--rate HZ] [--seconds S]
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <pthread.h>
#include <sched.h>

namespace {

int64_t now_ns() {
    timespec t{};
    clock_gettime(CLOCK_MONOTONIC, &t);
    return int64_t{t.tv_sec} * 1'000'000'000 + t.tv_nsec;
}

} // namespace

int main(int argc, char** argv) {
    int64_t quantum = 64;
    int64_t rate = 48000;
    double seconds = 60;
    for (int i = 1; i + 1 < argc; i += 2) {
        if (std::strcmp(argv[i], "--quantum") == 0) {
            quantum = std::atoll(argv[i + 1]);
        } else if (std::strcmp(argv[i], "--rate") == 0) {
            rate = std::atoll(argv[i + 1]);
        } else if (std::strcmp(argv[i], "--seconds") == 0) {
            seconds = std::atof(argv[i + 1]);
        }
    }
    sched_param param{};
    param.sched_priority = 20;
    const bool fifo = pthread_setschedparam(pthread_self(), SCHED_FIFO, &param) == 0;
    const int64_t period = quantum * 1'000'000'000 / rate;
    const auto cycles = static_cast<int64_t>(seconds * 1e9 / static_cast<double>(period));
    const int64_t base = now_ns();
    int64_t late_cycles = 0;
    int64_t episodes = 0;
    int64_t worst = 0;
    bool behind = false;
    for (int64_t k = 1; k <= cycles; ++k) {
        const int64_t due = base + k * period;
        const timespec deadline{static_cast<time_t>(due / 1'000'000'000),
                                static_cast<long>(due % 1'000'000'000)};
        clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &deadline, nullptr);
        const int64_t late = now_ns() - due;
        worst = late > worst ? late : worst;
        const bool missed = late > period;
        late_cycles += missed ? 1 : 0;
        episodes += missed && !behind ? 1 : 0;
        behind = missed;
    }
    std::printf("%s, quantum %lld at %lld Hz, %.0f s: %lld of %lld wake-ups more than a quantum "
                "late (%lld episodes, counted like audiod's xruns), worst %.2f ms\n",
                fifo ? "SCHED_FIFO" : "SCHED_OTHER (no permission for FIFO)",
                static_cast<long long>(quantum), static_cast<long long>(rate), seconds,
                static_cast<long long>(late_cycles), static_cast<long long>(cycles),
                static_cast<long long>(episodes), static_cast<double>(worst) / 1e6);
    return 0;
}
