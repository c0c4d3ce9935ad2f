// The real-time rule for the jack sink and source, on both of the threads
// that run them: the device's RT thread (`wait`, then `write` or `read`)
// and JACK's process thread (the module's callback), against a paced JACK
// server of the test's own, with every allocation, free and mutex lock
// made during them counted by the RT-safety hooks.
//
// The callback is JACK's to call, so the test stands in for
// jack_set_process_callback (exported from this program, it is the one the
// module binds to): the module's callback is registered wrapped in an
// RtScope, and counted as the device's cycles are.
#define BOOST_TEST_MODULE jack_rt_safety
#include <boost/test/unit_test.hpp>

#include "audiod/module.h"
#include "os/rt_scope.h"
#include "unit/server/rt_hooks.h"

#include <jack/jack.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdlib>
#include <dlfcn.h>
#include <pthread.h>
#include <string>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>
#include <vector>

using namespace audiod;
using audiod::test::rt_violations;

namespace {

JackProcessCallback g_module_callback = nullptr;
std::atomic<uint64_t> g_periods{0};

int counted_process_body(jack_nframes_t frames, void* arg) {
    RtScope scope;
    g_periods.fetch_add(1, std::memory_order_relaxed);
    return g_module_callback(frames, arg);
}

// Cancel-proof as the module's own entries are (jack_link.cpp says why):
// libjack cancels this thread asynchronously when the module closes its
// client, and RtScope's cleanup must not be where the cancel lands.
int counted_process(jack_nframes_t frames, void* arg) {
    int cancel_state = 0;
    pthread_setcancelstate(PTHREAD_CANCEL_DISABLE, &cancel_state);
    const int result = counted_process_body(frames, arg);
    pthread_setcancelstate(cancel_state, nullptr);
    return result;
}

} // namespace

extern "C" int jack_set_process_callback(jack_client_t* client, JackProcessCallback callback,
                                         void* arg) {
    using Real = int (*)(jack_client_t*, JackProcessCallback, void*);
    static void* const libjack = ::dlopen("libjack.so.0", RTLD_NOW);
    static const auto real = reinterpret_cast<Real>(
        libjack != nullptr ? ::dlsym(libjack, "jack_set_process_callback") : nullptr);
    if (real == nullptr) {
        return -1;
    }
    g_module_callback = callback;
    return real(client, counted_process, arg);
}

namespace {

// Starts a program that ends with this test, however the test ends (a
// jackd left behind would hold ctest's output pipe open).
pid_t spawn(const std::vector<std::string>& args) {
    std::vector<char*> argv;
    for (const std::string& a : args) {
        argv.push_back(const_cast<char*>(a.c_str()));
    }
    argv.push_back(nullptr);
    const pid_t pid = ::fork();
    BOOST_REQUIRE(pid >= 0);
    if (pid == 0) {
        ::prctl(PR_SET_PDEATHSIG, SIGTERM);
        ::execv(argv[0], argv.data());
        ::_exit(127);
    }
    return pid;
}

int wait_status(pid_t pid) {
    int status = 0;
    ::waitpid(pid, &status, 0);
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

void log_line(int, const char* component, const char* message) {
    BOOST_TEST_MESSAGE(component << ": " << message);
}

// `jackd -d dummy` of the test's own, and the module loaded as the server
// loads it.
struct JackAndModule {
    JackAndModule()
        : name("audiod-rt-" + std::to_string(::getpid())) {
        // As audiod does: libjack writes to jackd's socket, and a client
        // still closing on its own thread (close_link waits 500 ms for it)
        // may write after jackd has gone; a stress pass died of SIGPIPE so.
        std::signal(SIGPIPE, SIG_IGN);
        ::setenv("JACK_DEFAULT_SERVER", name.c_str(), 1);
        jackd = spawn({"/usr/bin/jackd", "-n", name, "-r", "-t", "10000", "-d", "dummy", "-r",
                       "48000", "-p", "256"});
        BOOST_REQUIRE_EQUAL(
            wait_status(spawn({"/usr/bin/jack_wait", "-w", "-t", "30", "-s", name})), 0);
        handle = ::dlopen(AUDIOD_MODULE_BUILD_DIR "/jack.so", RTLD_NOW);
        BOOST_REQUIRE_MESSAGE(handle != nullptr, ::dlerror());
        auto entry =
            reinterpret_cast<audiod_module_entry_fn>(::dlsym(handle, "audiod_module_entry"));
        BOOST_REQUIRE(entry != nullptr);
        module = entry();
    }
    ~JackAndModule() {
        ::kill(jackd, SIGTERM);
        wait_status(jackd);
    }

    std::string name;
    pid_t jackd = -1;
    void* handle = nullptr;
    const audiod_module* module = nullptr;
    audiod_host host{AUDIOD_MODULE_ABI_VERSION, log_line, nullptr, nullptr};
};

const audiod_option kOptions[] = {{"connect", "none"}};
const audiod_sink_config kConfig{"rt", 48000, 2, 256, kOptions, 1};
constexpr int kCycles = 200; // about a second

struct CycleRun {
    int completed = 0;
    int timeouts = 0;
    int error = 0; // the first error other than a timeout
};

// kCycles of `cycle` (a wait, then a write or read), each inside an
// RtScope. A wait that times out (no JACK period for half a second) is
// counted and waited again: a dummy jackd without real-time rights calls
// no one for 200 ms now and then on a loaded machine (a CI run saw it, its
// build beside, when the module gave up after 200 ms), which is the
// machine's doing and not what this test is about. Any other error ends
// the run, as does a minute.
template <class Cycle>
CycleRun run_cycles(const Cycle& cycle) {
    CycleRun run;
    const auto give_up = std::chrono::steady_clock::now() + std::chrono::minutes(1);
    while (run.completed < kCycles && run.error == 0 &&
           std::chrono::steady_clock::now() < give_up) {
        int rc = 0;
        {
            RtScope scope;
            rc = cycle();
        }
        if (rc == -ETIMEDOUT) {
            ++run.timeouts;
        } else if (rc != 0) {
            run.error = rc;
        } else {
            ++run.completed;
        }
    }
    BOOST_TEST_MESSAGE(run.completed << " cycles, " << run.timeouts << " waits timed out");
    return run;
}

} // namespace

BOOST_AUTO_TEST_CASE(a_sink_cycle_and_jacks_callback_never_allocate_or_lock) {
    JackAndModule m;
    void* sink = nullptr;
    audiod_sink_info info{};
    char error[512] = {};
    BOOST_REQUIRE_MESSAGE(
        m.module->sink->open(&m.host, &kConfig, &sink, &info, error, sizeof error) == 0, error);
    BOOST_REQUIRE(g_module_callback != nullptr);
    std::vector<float> frames(256 * 2, 0.25F);
    BOOST_REQUIRE_EQUAL(m.module->sink->start(sink), 0);
    rt_violations().reset();
    const uint64_t periods_before = g_periods.load();
    // (Checked outside the cycles: Boost.Test may allocate.)
    const CycleRun run = run_cycles([&] {
        const int rc = m.module->sink->wait(sink);
        return rc != 0 ? rc : m.module->sink->write(sink, frames.data(), 256);
    });
    {
        RtScope scope;
        m.module->sink->stop(sink);
    }
    BOOST_REQUIRE_EQUAL(run.error, 0);
    BOOST_REQUIRE_EQUAL(run.completed, kCycles);
    BOOST_CHECK_GT(g_periods.load() - periods_before, kCycles / 2u);
    BOOST_CHECK_EQUAL(rt_violations().allocations.load(), 0u);
    BOOST_CHECK_EQUAL(rt_violations().frees.load(), 0u);
    BOOST_CHECK_EQUAL(rt_violations().locks.load(), 0u);
    m.module->sink->close(sink);
}

BOOST_AUTO_TEST_CASE(a_source_cycle_and_jacks_callback_never_allocate_or_lock) {
    JackAndModule m;
    void* source = nullptr;
    audiod_sink_info info{};
    char error[512] = {};
    BOOST_REQUIRE_MESSAGE(
        m.module->source->open(&m.host, &kConfig, &source, &info, error, sizeof error) == 0, error);
    std::vector<float> frames(256 * 2);
    BOOST_REQUIRE_EQUAL(m.module->source->start(source), 0);
    rt_violations().reset();
    const uint64_t periods_before = g_periods.load();
    const CycleRun run = run_cycles([&] {
        const int rc = m.module->source->wait(source);
        return rc != 0 ? rc : m.module->source->read(source, frames.data(), 256);
    });
    {
        RtScope scope;
        m.module->source->stop(source);
    }
    BOOST_REQUIRE_EQUAL(run.error, 0);
    BOOST_REQUIRE_EQUAL(run.completed, kCycles);
    BOOST_CHECK_GT(g_periods.load() - periods_before, kCycles / 2u);
    BOOST_CHECK_EQUAL(rt_violations().allocations.load(), 0u);
    BOOST_CHECK_EQUAL(rt_violations().frees.load(), 0u);
    BOOST_CHECK_EQUAL(rt_violations().locks.load(), 0u);
    m.module->source->close(source);
}
