// The real-time rule for the jack sink and source, on both of the threads
// that run them: the device's RT thread (`wait`, then `write` or `read`)
// and JACK's process thread (the module's callback), against a paced JACK
// server of the test's own, with every allocation, free and mutex lock
// made during them counted by the RT-safety hooks.
//
// The callback is JACK's to call, so the test stands in for
// jack_set_process_callback (jack_rig.h): the module's callback is
// registered wrapped in an RtScope, and counted as the device's cycles are.
#define BOOST_TEST_MODULE jack_rt_safety
#include <boost/test/unit_test.hpp>

#include "audiod/module.h"
#include "os/rt_scope.h"
#include "unit/modules/jack/jack_rig.h"
#include "unit/server/rt_hooks.h"

#include <cerrno>
#include <chrono>
#include <vector>

using namespace audiod;
using audiod::test::g_jack_periods;
using audiod::test::JackAndModule;
using audiod::test::rt_violations;

namespace {

const audiod_option kOptions[] = {{"connect", "none"}};
const audiod_device_config kConfig{"rt", 48000, 2, 256, kOptions, 1};
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
    audiod_open_info info{};
    char error[512] = {};
    BOOST_REQUIRE_MESSAGE(
        m.module->sink->open(&m.host, &kConfig, &sink, &info, error, sizeof error) == 0, error);
    BOOST_REQUIRE(audiod::test::jack_callback_registered());
    std::vector<float> frames(256 * 2, 0.25F);
    BOOST_REQUIRE_EQUAL(m.module->sink->start(sink), 0);
    rt_violations().reset();
    const uint64_t periods_before = g_jack_periods.load();
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
    BOOST_CHECK_GT(g_jack_periods.load() - periods_before, kCycles / 2u);
    BOOST_CHECK_EQUAL(rt_violations().allocations.load(), 0u);
    BOOST_CHECK_EQUAL(rt_violations().frees.load(), 0u);
    BOOST_CHECK_EQUAL(rt_violations().locks.load(), 0u);
    m.module->sink->close(sink);
}

BOOST_AUTO_TEST_CASE(a_source_cycle_and_jacks_callback_never_allocate_or_lock) {
    JackAndModule m;
    void* source = nullptr;
    audiod_open_info info{};
    char error[512] = {};
    BOOST_REQUIRE_MESSAGE(
        m.module->source->open(&m.host, &kConfig, &source, &info, error, sizeof error) == 0, error);
    std::vector<float> frames(256 * 2);
    BOOST_REQUIRE_EQUAL(m.module->source->start(source), 0);
    rt_violations().reset();
    const uint64_t periods_before = g_jack_periods.load();
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
    BOOST_CHECK_GT(g_jack_periods.load() - periods_before, kCycles / 2u);
    BOOST_CHECK_EQUAL(rt_violations().allocations.load(), 0u);
    BOOST_CHECK_EQUAL(rt_violations().frees.load(), 0u);
    BOOST_CHECK_EQUAL(rt_violations().locks.load(), 0u);
    m.module->source->close(source);
}
