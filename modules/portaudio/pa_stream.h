// What the portaudio sink and source share: one PortAudio blocking stream
// on a device named by the options, how long to wait for the next quantum,
// and what `audioctl list` shows of it. Opening and closing run on the
// control thread; the rest on the device's RT thread.
#pragma once

#include "audiod/module.h"
#include "pa_host.h"

#include <atomic>
#include <cstdint>
#include <iterator>
#include <memory>
#include <string>

namespace audiod::portaudio {

// What the portaudio sink and source accept (`process` is pa_endpoint.h's).
inline constexpr audiod_option_spec kOptions[] = {
    {"device", "string", nullptr, "",
     "a device's name, exactly or a unique part of it, or its index (audiod --list-devices); "
     "default: PortAudio's default device"},
    {"host-api", "string", nullptr, "", "only this host API's devices: alsa, jack, oss ..."},
    {"latency-ms", "integer", nullptr, "1..2000",
     "PortAudio's suggested latency, and what a sink keeps queued; default: three quanta"},
    {"format", "enum", "s32", "s16|s32|f32", "the samples PortAudio is given or delivers"},
    {"process", "enum", nullptr, "own|server",
     "where the stream runs: own, a helper process; server, the server's; default: own for "
     "JACK's devices, server for the others"},
};

struct PaDevice {
    const audiod_host* host = nullptr; // for a warning from close_device
    std::unique_ptr<PaLibrary> library;
    PaStream* stream = nullptr;
    bool capture = false;
    uint32_t rate = 0;
    uint32_t quantum = 0;
    uint32_t frame_bytes = 0;
    uint32_t buffer = 0; // frames the device (or PortAudio's ring) holds
    uint32_t keep = 0;   // playback: frames kept queued, the sink's latency
    std::string api;
    std::string device;
    double reported_ms = 0; // PortAudio's own latency figure
    std::atomic<uint64_t> xruns{0};
    std::atomic<bool> failed{false};  // an error failed the device (failing())
    std::atomic<bool> in_call{false}; // the RT thread is inside Pa_WriteStream/Pa_ReadStream
};

// What open_device puts in `code`, with no device and no error, when the
// options name a JACK device and `jack_here` is false: it is to be opened
// in a helper process (remote_device.h).
constexpr int kOpenInHelper = 1;

// Opens the device the options (kOptions; `process` is
// remote_device.h's) name for playback or capture and fills
// `info`. Returns nullptr with a message in `error` and a negative errno in
// `code` if it cannot. Thread: control (or a helper's only thread).
PaDevice* open_device(const audiod_host* host, const audiod_device_config& config, bool capture,
                      audiod_open_info* info, std::string* error, int* code, bool jack_here);
// Stops and closes the stream and lets go of PortAudio, on a thread of its
// own, waiting for it at most 300 ms: PortAudio 19.6 can block for ever
// there (a JACK stream whose server died waits for JACK to drain it). A
// stream that does not close in time is left to that thread and said so.
// That thread holds setup_mutex() (pa_host.h) until it is done: an
// open_device meanwhile is refused with -EAGAIN, not run beside it (a
// reopen is tried again a second later).
//
// A JACK stream that failed, that JACK stopped, or whose write the
// watchdog gave up on, is never closed but left open, and no PortAudio
// JACK device is opened again in this process: PortAudio 19.6 aborts the
// whole process when it unregisters a port of a client that JACK has shut
// down or thrown out (CleanUpStream asserts that jack_port_unregister
// succeeded), whether closing a stream or cleaning up after an open that
// failed, and a failed stream's client may be such a client (a CI run lost
// the server to a close, and a stress run to a reopen, after a JACK server
// held up by load had failed the sink). Thread: control.
void close_device(PaDevice* device);

// Returns `code`; one that is not 0 marks the device failed, for
// close_device. Thread: rt.
int failing(PaDevice& device, int code);

// Starts the stream. Thread: rt.
int start_device(PaDevice& device);
// Sleeps until a quantum fits (playback: and no more than `keep` would be
// queued) or has been captured; for at most two quanta and 500 ms, then
// -ETIMEDOUT; -ENODEV once PortAudio says the stream stopped by itself (the
// JACK server shut down). Thread: rt.
int wait_for_quantum(PaDevice& device);
// Whether the device is still there, asked right before each blocking read
// or write: 0, or the error that fails the device. PortAudio 19.6 (Debian
// 12's) loops for ever inside Pa_WriteStream or Pa_ReadStream when the
// device vanishes while the call runs, if the device reports that as an
// xrun (as ALSA plugin devices such as bluealsa do): its recovery cannot
// prepare the device again, and the failure jumps back into the recovery
// (fixed upstream in June 2025: PortAudio 87e35e7, "Avoid infinite loops
// and hangs in ALSA code"). Asked here, a vanished device fails the call
// that asks; asked only before the cycle's mix, it could vanish during the
// mix, and the next call would never return. What is left, the gap
// between this check and the call (milliseconds on a loaded machine), is
// closed by read_stream and write_stream (recovery_escape.h). Thread: rt.
int check_present(PaDevice& device);

// "host-api=…\ndevice=…\npa-latency-ms=…\nbuffer-ms=…\n". Thread: any.
size_t describe_device(const PaDevice& device, char* text, size_t size);

} // namespace audiod::portaudio
