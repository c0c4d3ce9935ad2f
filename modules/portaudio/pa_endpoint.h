// The portaudio sink and the portaudio source: play the mix on, or record
// from, any device PortAudio reaches (ALSA, JACK, OSS), driven by the
// device's clock (module_ops.h makes their tables from this class).
//
//   [sinks.studio]                 [sources.mic]
//   type = "portaudio"             type = "portaudio"
//   device = "system"              device = "USB"   # pa_stream.h's kOptions: every option
//   host-api = "jack"
//
// The device is a PortAudio stream in the server (pa_stream.h) or in a
// helper process (remote_device.h, which says which devices go where and
// why), behind the one set of calls below.
//
// Why the blocking API and not a callback. The server's model is already
// "the device's clock drives a thread of ours": `wait` blocks until a
// quantum fits, `write` hands it over. PortAudio's blocking streams give
// exactly that, on our own real-time thread (our priority, our RT-safety
// checks, no PortAudio thread to promote with PaAlsa_EnableRealtimeScheduling),
// with no hand-off between threads: Pa_WriteStream converts straight into
// the device's buffer. A callback stream would run the cycle on
// PortAudio's thread, which the server's cycle cannot follow without a
// ring and a wake-up between the two threads — an extra copy and up to a
// quantum of extra latency — and PortAudio 19.6 can hang in Pa_StartStream
// when ALSA's start fails in callback mode. (Through JACK, PortAudio's
// blocking stream is itself a ring beside JACK's process callback; that
// ring is PortAudio's, sized by `latency-ms`.)
//
// `latency-ms` is also PortAudio's suggested latency, but the device's
// buffer comes out larger (an ALSA device asked for 85 ms holds 107), and
// PortAudio's own latency figure counts only part of it: the sink keeps no
// more than `latency-ms` queued (whole quanta, at least two), which is the
// latency it reports, and the rest of the buffer is headroom. `wait` asks
// how much is free (Pa_GetStreamWriteAvailable) and sleeps until enough
// should have played, so a cycle costs one or two wake-ups; a source's
// sleeps until a quantum has been captured (Pa_GetStreamReadAvailable).
// Dither is off (the samples arrive as they were mixed: s16 material
// through s32 to a 16-bit device is bit-exact). An underflow or overflow
// PortAudio reports counts as an xrun (a source still delivers the frames
// read); any other error fails the device, whose streams then move
// elsewhere (a sink's to another sink, a source's record streams to the
// default sink's monitor) until the server reopens it (once a second),
// which asks PortAudio for its devices afresh. A JACK stream whose server
// went away is seen at once (Pa_IsStreamActive) and fails the device too.
// `stop` leaves the stream alone, since stopping can block for ever (a
// dead JACK); close_device (pa_stream.h) stops it, with a deadline.
//
// In a helper process, the helper runs this same wait and write (or read)
// against the device, and the device's own cycle waits for room in the
// ring between them.
#pragma once

#include "audiod/module.h"
#include "module_ops.h"
#include "pa_stream.h"
#include "remote_device.h"

#include <memory>
#include <string>

namespace audiod::portaudio {

class PaEndpoint {
public:
    // Opens the device the options name where `process` says (default:
    // JACK's in a helper, the others here). nullptr with a message in
    // `error` and a negative errno in `code` if it cannot. Thread: control.
    static std::unique_ptr<PaEndpoint> open(const OpenRequest& request, audiod_open_info* info,
                                            std::string* error, int* code);
    PaEndpoint() = default;
    // Closes the stream (close_device) or ends the helper (close_remote).
    // Thread: control.
    ~PaEndpoint();
    PaEndpoint(const PaEndpoint&) = delete;
    PaEndpoint& operator=(const PaEndpoint&) = delete;

    // Thread: rt.
    int start_rt() noexcept;
    int wait_rt() noexcept;
    int write_rt(const void* frames, uint32_t count) noexcept;
    int read_rt(void* frames, uint32_t count) noexcept;
    // Nothing: stopping a PortAudio stream can block (close_device says
    // when), and the RT thread must end. The destructor stops it.
    void stop_rt() noexcept {}

    // Thread: any.
    [[nodiscard]] uint64_t xruns() const noexcept;
    size_t describe(char* text, size_t size) const;

private:
    PaDevice* local_ = nullptr;      // in the server, or
    RemoteDevice* remote_ = nullptr; // in a helper
};

} // namespace audiod::portaudio
