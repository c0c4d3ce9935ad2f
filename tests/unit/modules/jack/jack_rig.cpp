#include "unit/modules/jack/jack_rig.h"

#include "os/rt_scope.h"

#include <boost/test/unit_test.hpp>
#include <jack/jack.h>

#include <csignal>
#include <cstdlib>
#include <dlfcn.h>
#include <pthread.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>
#include <vector>

namespace audiod::test {

std::atomic<uint64_t> g_jack_periods{0};
std::atomic<int> g_jack_calls_to_withhold{0};
std::atomic<uint64_t> g_jack_skipped_cycles{0};
std::atomic<uint64_t> g_jack_xrun_reports{0};

namespace {

std::atomic<JackProcessCallback> g_module_callback{nullptr};
std::atomic<JackXRunCallback> g_module_xrun_callback{nullptr};
std::atomic<void*> g_module_xrun_arg{nullptr};
std::atomic<jack_client_t*> g_client{nullptr};
// JACK's process thread's own: the frame time its next call should begin
// at, once a call of this client has been seen (reset as a test's client
// registers, before JACK calls it).
jack_nframes_t g_next_cycle = 0;
std::atomic<bool> g_called_before{false};

// A function of the libjack the module loaded (the test program does not
// link it), or nullptr.
void* libjack_symbol(const char* name) {
    static void* const libjack = ::dlopen("libjack.so.0", RTLD_NOW);
    return libjack != nullptr ? ::dlsym(libjack, name) : nullptr;
}

// Counts the cycles JACK skipped the module's client for, as the module does.
void note_skipped_cycles(jack_nframes_t frames) {
    using LastFrameTime = jack_nframes_t (*)(const jack_client_t*);
    static const auto last_frame_time =
        reinterpret_cast<LastFrameTime>(libjack_symbol("jack_last_frame_time"));
    jack_client_t* client = g_client.load(std::memory_order_acquire);
    if (last_frame_time == nullptr || client == nullptr) {
        return;
    }
    const jack_nframes_t begun = last_frame_time(client);
    if (g_called_before.load(std::memory_order_acquire) && begun != g_next_cycle) {
        g_jack_skipped_cycles.fetch_add(1, std::memory_order_relaxed);
    }
    g_next_cycle = begun + frames;
    g_called_before.store(true, std::memory_order_release);
}

int counted_process_body(jack_nframes_t frames, void* arg) {
    note_skipped_cycles(frames);
    if (g_jack_calls_to_withhold.load(std::memory_order_acquire) > 0) {
        g_jack_calls_to_withhold.fetch_sub(1, std::memory_order_acq_rel);
        return 0;
    }
    RtScope scope;
    g_jack_periods.fetch_add(1, std::memory_order_relaxed);
    return g_module_callback.load(std::memory_order_acquire)(frames, arg);
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

// JACK's own xrun reports, counted on their way to the module.
int counted_xrun(void* arg) {
    g_jack_xrun_reports.fetch_add(1, std::memory_order_relaxed);
    return g_module_xrun_callback.load(std::memory_order_acquire)(arg);
}

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

} // namespace

bool jack_callback_registered() {
    return g_module_callback.load(std::memory_order_acquire) != nullptr;
}

void report_jack_xrun() {
    const JackXRunCallback callback = g_module_xrun_callback.load(std::memory_order_acquire);
    BOOST_REQUIRE(callback != nullptr);
    callback(g_module_xrun_arg.load(std::memory_order_acquire));
}

JackAndModule::JackAndModule()
    : name("audiod-rt-" + std::to_string(::getpid()))
    , host{AUDIOD_MODULE_ABI_VERSION, log_line, nullptr, nullptr} {
    // As audiod does: libjack writes to jackd's socket, and a client
    // still closing on its own thread (close_link waits 500 ms for it)
    // may write after jackd has gone; a stress pass died of SIGPIPE so.
    std::signal(SIGPIPE, SIG_IGN);
    ::setenv("JACK_DEFAULT_SERVER", name.c_str(), 1);
    jackd = spawn({"/usr/bin/jackd", "-n", name, "-r", "-t", "10000", "-d", "dummy", "-r", "48000",
                   "-p", "256"});
    BOOST_REQUIRE_EQUAL(wait_status(spawn({"/usr/bin/jack_wait", "-w", "-t", "30", "-s", name})),
                        0);
    handle = ::dlopen(AUDIOD_MODULE_BUILD_DIR "/jack.so", RTLD_NOW);
    BOOST_REQUIRE_MESSAGE(handle != nullptr, ::dlerror());
    auto entry = reinterpret_cast<audiod_module_entry_fn>(::dlsym(handle, "audiod_module_entry"));
    BOOST_REQUIRE(entry != nullptr);
    module = entry();
}

JackAndModule::~JackAndModule() {
    ::kill(jackd, SIGTERM);
    wait_status(jackd);
}

} // namespace audiod::test

// The module binds to these: the program exports them.
extern "C" int jack_set_process_callback(jack_client_t* client, JackProcessCallback callback,
                                         void* arg) {
    using Real = int (*)(jack_client_t*, JackProcessCallback, void*);
    static const auto real =
        reinterpret_cast<Real>(audiod::test::libjack_symbol("jack_set_process_callback"));
    if (real == nullptr) {
        return -1;
    }
    audiod::test::g_called_before.store(false, std::memory_order_release);
    audiod::test::g_client.store(client, std::memory_order_release);
    audiod::test::g_module_callback.store(callback, std::memory_order_release);
    return real(client, audiod::test::counted_process, arg);
}

extern "C" int jack_set_xrun_callback(jack_client_t* client, JackXRunCallback callback, void* arg) {
    using Real = int (*)(jack_client_t*, JackXRunCallback, void*);
    static const auto real =
        reinterpret_cast<Real>(audiod::test::libjack_symbol("jack_set_xrun_callback"));
    if (real == nullptr) {
        return -1;
    }
    audiod::test::g_module_xrun_callback.store(callback, std::memory_order_release);
    audiod::test::g_module_xrun_arg.store(arg, std::memory_order_release);
    return real(client, audiod::test::counted_xrun, arg);
}
