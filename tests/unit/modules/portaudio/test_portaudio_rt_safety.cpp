// The real-time rule for the portaudio sink and source: their cycles
// (`wait`, then `write` or `read`) through PortAudio's ALSA host API on the
// test sound card, with every allocation, free and mutex lock made during
// them counted by the RT-safety hooks — the module as the server loads it,
// PortAudio and alsa-lib included.
//
// Two things are set aside, and why:
// - alsa-lib's own mutex: it locks every call on a plugin PCM (such as the
//   test card; not on hardware, where the kernel serialises) unless
//   LIBASOUND_THREAD_SAFE=0. The server uses a PCM from one thread at a
//   time, so that mutex is never contended, never waited on; the test turns
//   it off to see that PortAudio and the module lock nothing themselves.
// - the first cycle: PortAudio's ALSA host API allocates a bounce buffer on
//   the first transfer to a device without mmap (plugins again; hardware
//   maps), once per stream. The test runs that cycle uncounted.
#define BOOST_TEST_MODULE portaudio_rt_safety
#include <boost/test/unit_test.hpp>

#include "audiod/module.h"
#include "os/rt_scope.h"
#include "unit/modules/portaudio/module_on_test_card.h"
#include "unit/server/rt_hooks.h"

#include <cstdlib>
#include <vector>

using namespace audiod;
using audiod::test::rt_violations;

namespace {

// The module on the test card, with alsa-lib's own mutex off (above).
struct Module : audiod::test::ModuleOnTestCard {
    Module() { ::setenv("LIBASOUND_THREAD_SAFE", "0", 1); }
};

// 200 ms of buffer: a loaded machine must not make the device underrun,
// whose recovery (alsa-lib's, PortAudio's) is not what is measured here.
const audiod_option kOptions[] = {{"device", "testcard"}, {"latency-ms", "200"}};
const audiod_device_config kConfig{"rt", 48000, 2, 256, kOptions, 2};
// The same device in a helper process: the cycle is then the ring's and the
// eventfds', on the server's side.
const audiod_option kHelperOptions[] = {
    {"device", "testcard"}, {"latency-ms", "200"}, {"process", "own"}};
const audiod_device_config kHelperConfig{"rt", 48000, 2, 256, kHelperOptions, 3};

} // namespace

void sink_cycles_never_allocate_or_lock(const audiod_device_config& config) {
    Module m;
    void* sink = nullptr;
    audiod_open_info info{};
    char error[512] = {};
    BOOST_REQUIRE_MESSAGE(
        m.module->sink->open(&m.host, &config, &sink, &info, error, sizeof error) == 0, error);
    std::vector<int32_t> frames(256 * 2, 1 << 16);
    BOOST_REQUIRE_EQUAL(m.module->sink->start(sink), 0);
    BOOST_REQUIRE_EQUAL(m.module->sink->wait(sink), 0); // the uncounted first cycle
    BOOST_REQUIRE_EQUAL(m.module->sink->write(sink, frames.data(), 256), 0);
    rt_violations().reset();
    int failed = 0; // (checked outside the cycle: Boost.Test may allocate)
    for (int cycle = 0; cycle < 200 && failed == 0; ++cycle) { // about a second
        RtScope scope;
        failed = m.module->sink->wait(sink);
        failed = failed != 0 ? failed : m.module->sink->write(sink, frames.data(), 256);
    }
    BOOST_REQUIRE_EQUAL(failed, 0);
    {
        RtScope scope;
        m.module->sink->stop(sink);
    }
    BOOST_CHECK_EQUAL(rt_violations().allocations.load(), 0u);
    BOOST_CHECK_EQUAL(rt_violations().frees.load(), 0u);
    BOOST_CHECK_EQUAL(rt_violations().locks.load(), 0u);
    m.module->sink->close(sink);
}

BOOST_AUTO_TEST_CASE(a_sink_cycle_never_allocates_or_locks) {
    sink_cycles_never_allocate_or_lock(kConfig);
}

BOOST_AUTO_TEST_CASE(a_sink_cycle_with_a_helper_process_never_allocates_or_locks) {
    sink_cycles_never_allocate_or_lock(kHelperConfig);
}

void source_cycles_never_allocate_or_lock(const audiod_device_config& config) {
    Module m;
    void* source = nullptr;
    audiod_open_info info{};
    char error[512] = {};
    BOOST_REQUIRE_MESSAGE(
        m.module->source->open(&m.host, &config, &source, &info, error, sizeof error) == 0, error);
    std::vector<int32_t> frames(256 * 2);
    BOOST_REQUIRE_EQUAL(m.module->source->start(source), 0);
    BOOST_REQUIRE_EQUAL(m.module->source->wait(source), 0); // the uncounted first cycle
    BOOST_REQUIRE_EQUAL(m.module->source->read(source, frames.data(), 256), 0);
    rt_violations().reset();
    int failed = 0;
    for (int cycle = 0; cycle < 200 && failed == 0; ++cycle) {
        RtScope scope;
        failed = m.module->source->wait(source);
        failed = failed != 0 ? failed : m.module->source->read(source, frames.data(), 256);
    }
    BOOST_REQUIRE_EQUAL(failed, 0);
    {
        RtScope scope;
        m.module->source->stop(source);
    }
    BOOST_CHECK_EQUAL(rt_violations().allocations.load(), 0u);
    BOOST_CHECK_EQUAL(rt_violations().frees.load(), 0u);
    BOOST_CHECK_EQUAL(rt_violations().locks.load(), 0u);
    m.module->source->close(source);
}

BOOST_AUTO_TEST_CASE(a_source_cycle_never_allocates_or_locks) {
    source_cycles_never_allocate_or_lock(kConfig);
}

BOOST_AUTO_TEST_CASE(a_source_cycle_with_a_helper_process_never_allocates_or_locks) {
    source_cycles_never_allocate_or_lock(kHelperConfig);
}
