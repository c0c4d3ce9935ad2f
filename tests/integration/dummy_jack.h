// A paced JACK server of a test's own, and what the JACK tests share: the
// sanitizer settings a server needs beside libjack, and how a tone that
// came out of the JACK graph is judged.
#pragma once

#include "helpers.h"
#include "process.h"

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <sys/types.h>

namespace audiod::test {

// `jackd -d dummy` (no sound card, no real-time rights) at 48 kHz with the
// given period, which this process and the programs it starts find by
// name through JACK_DEFAULT_SERVER. Clients get 10 s to answer before
// jackd throws them out (500 ms by default: too short for a loaded test
// machine, where a stress pass once found neither audiod's client nor
// jack_rec left in the graph). It is stopped with SIGTERM, as a user
// would: a jackd killed outright can leave JACK's shared registry locked,
// and every jackd after it on the machine hangs at start.
class DummyJack {
public:
    explicit DummyJack(uint32_t period = 256);
    ~DummyJack();
    DummyJack(const DummyJack&) = delete;
    DummyJack& operator=(const DummyJack&) = delete;

    // Starts it (again, under the same name) and waits until it answers.
    void start();
    void stop();
    // What jackd has printed, for a failure's message.
    [[nodiscard]] std::string said() const;
    [[nodiscard]] const std::string& name() const { return name_; }
    [[nodiscard]] pid_t pid() const;

private:
    std::string name_;
    uint32_t period_;
    std::unique_ptr<BackgroundProgram> server_;
};

// For servers started while it lives: libjack's threads (and PortAudio's
// ring beside them, in uninstrumented code) are not ThreadSanitizer's to
// judge, nor are the jack module's copies into and out of JACK's port
// buffers, which other clients read and write in an order JACK keeps with
// semaphores in shared memory; and libjack leaves the threads of a client
// whose server died unjoined. (Only the server needs telling: this process reads
// TSAN_OPTIONS when it starts, never again.)
class JackSanitizerSettings {
public:
    explicit JackSanitizerSettings(const TempDir& dir);
    ~JackSanitizerSettings();
    JackSanitizerSettings(const JackSanitizerSettings&) = delete;
    JackSanitizerSettings& operator=(const JackSanitizerSettings&) = delete;

private:
    std::string before_;
};

// Records PORTS (two, "client:port") with jack_rec for 8 s while `play`
// runs, then checks the tone audioplay makes (1000 Hz, -12 dBFS) in it,
// or prints SERVER's log and sinks (where the tone went). 8 s: beside the
// suite and stress-ng, a 3 s recording once held under 0.3 s of the tone,
// which came over 2.7 s after the recording began. The level is judged in
// 100 ms windows: a JACK server without real-time rights misses periods
// on a loaded machine, and the gaps pull a fit over the whole tone down
// (by 1.3 to 2.9 dB beside the suite), while the windows between them
// hold the tone whole. Most of them must. Where the sink failed for want
// of JACK periods while JACK reported its own clients late, the tone is
// not judged, only said.
void check_tone_from_jack(const TempDir& dir, const ServerProcess& server, const DummyJack& jack,
                          const std::string& left, const std::string& right,
                          const std::function<void()>& play);

} // namespace audiod::test
