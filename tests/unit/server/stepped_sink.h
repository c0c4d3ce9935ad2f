// A sink module for in-process tests: every cycle waits until the test
// allows it, and every quantum written is kept for inspection. It lets a
// test drive a real Device (real RT thread, real queues, real mixing) one
// cycle at a time, with no timing involved.
#pragma once

#include "audiod/module.h"
#include "device/device.h"
#include "device/stream.h"

#include <atomic>
#include <cstring>
#include <map>
#include <memory>
#include <semaphore>
#include <string>
#include <vector>

namespace audiod::test {

struct SteppedDevice {
    std::counting_semaphore<1 << 20> permits{0};
    std::atomic<bool> stopping{false};
    // Output, preallocated so that write() neither allocates nor locks, and
    // left unwritten: zeroing 64 MiB for every sink cost ~1 s under
    // ThreadSanitizer (its shadow of every byte is written too).
    static constexpr size_t kCapacity = 64 << 20;
    std::unique_ptr<uint8_t[]> captured = std::make_unique_for_overwrite<uint8_t[]>(kCapacity);
    std::atomic<size_t> captured_bytes{0};
    std::atomic<uint64_t> cycles{0};
    std::atomic<bool> waiting{false};        // the RT thread is inside `wait`
    std::atomic<uint64_t> waits_returned{0}; // waits that let a cycle run
    uint32_t frame_bytes = 0;
};

// The module: options "format" (s16le/s32le/f32le) and "latency". As a
// source it captures a quantum of silence each cycle.
const audiod_module& stepped_module();

// Every device opened so far, in order (tests open sinks one after another).
std::vector<SteppedDevice*>& stepped_devices();

// Lets `cycles` cycles of `device` run and waits (up to 10 s) until they have.
void step(SteppedDevice& device, uint64_t cycles);

// A Device on a SteppedDevice, with helpers to play the client's part.
class SinkRig {
public:
    explicit SinkRig(DeviceFormat format = {48000, 2, 64}, const char* output_format = "s16le",
                     std::string name = "test");
    ~SinkRig();

    // Lets `cycles` cycles run and waits (up to 10 s) until they have.
    void run_cycles(uint64_t cycles);

    // A stream with a ring of `capacity` frames, attached to the sink; its
    // rate and channel count default to the sink's, and it is converted
    // (format, channels, rate) as the Engine would set it up.
    Stream& add_stream(SampleFormat format, uint64_t capacity, float gain = 1.0f, uint32_t rate = 0,
                       uint32_t channels = 0, bool record = false);
    // Writes frames into the stream's ring as a client would.
    void write(Stream& stream, const void* frames, uint64_t count);
    void set_client_flags(Stream& stream, uint32_t flags);
    void send(const RtCommand& command);
    // Collects RT events (waits briefly for at least `at_least`).
    std::vector<RtEvent> events(size_t at_least = 0);

    template <class T>
    std::vector<T> output() const {
        const size_t bytes = device->captured_bytes.load();
        std::vector<T> out(bytes / sizeof(T));
        std::memcpy(out.data(), device->captured.get(), out.size() * sizeof(T));
        return out;
    }

    DeviceFormat format;
    std::unique_ptr<Device> sink;
    SteppedDevice* device = nullptr;
    std::vector<std::unique_ptr<Stream>> streams;

private:
    std::map<Stream*, uint64_t> write_pos_;
};

} // namespace audiod::test
