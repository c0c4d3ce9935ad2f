// What the jack module's unit tests share: a paced JACK server of the
// test's own, the module loaded as the server loads it, and a stand-in for
// jack_set_process_callback and jack_set_xrun_callback (exported from the
// test program, so the module binds to them) through which the test sees,
// and may withhold or add to, JACK's calls into the module.
#pragma once

#include "audiod/module.h"

#include <atomic>
#include <cstdint>
#include <string>
#include <sys/types.h>

namespace audiod::test {

// JACK's calls into the module's process callback, each made inside an
// RtScope; the ones withheld are not counted.
extern std::atomic<uint64_t> g_jack_periods;
// Set to N: JACK's next N calls into the module are not passed on, as if
// JACK had skipped the module's client for N cycles of its graph.
extern std::atomic<int> g_jack_calls_to_withhold;
// The module has registered its process callback.
bool jack_callback_registered();
// Cycles of the graph JACK itself did not call the module's client for
// (seen from the frame times of its calls; withheld calls not included).
extern std::atomic<uint64_t> g_jack_skipped_cycles;
// The xrun reports JACK itself made to the module (the module's xrun
// callback goes through the rig, as its process callback does).
extern std::atomic<uint64_t> g_jack_xrun_reports;
// Calls the module's xrun callback, as JACK's notification thread does when
// its graph had an xrun.
void report_jack_xrun();

// `jackd -d dummy` (48 kHz, 256-frame periods) of the test's own, and the
// module loaded as the server loads it.
struct JackAndModule {
    JackAndModule();
    ~JackAndModule();
    JackAndModule(const JackAndModule&) = delete;
    JackAndModule& operator=(const JackAndModule&) = delete;

    std::string name;
    pid_t jackd = -1;
    void* handle = nullptr;
    const audiod_module* module = nullptr;
    audiod_host host;
};

} // namespace audiod::test
