// The portaudio sink: plays the mix on any device PortAudio reaches (ALSA,
// JACK, OSS), driven by the device's clock.
//
//   [sinks.studio]
//   type = "portaudio"
//   device = "system"     # a name, exactly or a unique part of it, or an
//                         # index (audiod --list-devices); default: PortAudio's
//   host-api = "jack"     # only that host API's devices (alsa, jack, oss)
//   latency-ms = 10       # what the sink keeps queued (default: 3 quanta)
//   format = "s32"        # what PortAudio is given: s16, s32 (default), f32
//   process = "own"       # in a helper process (default for JACK's devices);
//                         # "server": in the server's (remote_device.h)
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
// should have played, so a cycle costs one or two wake-ups. Dither
// is off (the samples arrive as they were mixed: s16 material through s32
// to a 16-bit device is bit-exact). An underflow PortAudio reports counts
// as an xrun; any other error fails the sink, whose streams then move to
// another sink until the server reopens this one (once a second), which
// asks PortAudio for its devices afresh. A JACK stream whose server went
// away is seen at once (Pa_IsStreamActive) and fails the sink too. `stop`
// leaves the stream alone, since stopping can block for ever (a dead
// JACK); close_device (pa_stream.h) stops it, with a deadline.
//
// All of the above runs in the server, or in a helper process that the
// sink feeds through a ring (pa_endpoint.h, remote_device.h): the helper
// then runs this same wait and write against the device, and the sink's
// own cycle waits for room in the ring.
#include "device_options.h"
#include "pa_endpoint.h"
#include "portaudio_module.h"
#include "recovery_escape.h"

#include <cerrno>

namespace audiod::portaudio {

namespace {

int sink_open(const audiod_host* host, const audiod_device_config* config, void** instance,
              audiod_open_info* info, char* error, size_t error_size) {
    std::string why;
    int code = 0;
    PaEndpoint* endpoint = open_endpoint(host, *config, false, info, &why, &code);
    if (endpoint == nullptr) {
        set_error(error, error_size, why);
        return code;
    }
    *instance = endpoint;
    return 0;
}

int sink_start(void* instance) {
    return start_endpoint(*static_cast<PaEndpoint*>(instance));
}

int sink_wait(void* instance) {
    return wait_endpoint(*static_cast<PaEndpoint*>(instance));
}

int sink_write(void* instance, const void* frames, uint32_t count) {
    auto& endpoint = *static_cast<PaEndpoint*>(instance);
    if (endpoint.remote != nullptr) {
        return write_remote(*endpoint.remote, frames, count);
    }
    auto& device = *endpoint.local;
    if (const int gone = check_present(device); gone != 0) {
        return gone;
    }
    device.in_call.store(true, std::memory_order_relaxed);
    const PaError err = write_stream(device.stream, frames, count);
    device.in_call.store(false, std::memory_order_relaxed);
    if (err == paOutputUnderflowed) {
        device.xruns.fetch_add(1, std::memory_order_relaxed);
        return 0;
    }
    return err == paNoError ? 0 : failing(device, error_code(err));
}

// Nothing here: stopping a PortAudio stream can block (close_device says
// when), and the RT thread must end. close_device stops it.
void sink_stop(void*) {}

void sink_close(void* instance) {
    close_endpoint(static_cast<PaEndpoint*>(instance));
}

uint64_t sink_xruns(void* instance) {
    return endpoint_xruns(*static_cast<PaEndpoint*>(instance));
}

size_t sink_describe(void* instance, char* text, size_t size) {
    return describe_endpoint(*static_cast<const PaEndpoint*>(instance), text, size);
}

constexpr audiod_sink_ops kSinkOps = {sink_open, sink_start,         sink_wait,  sink_write,
                                      sink_stop, sink_close,         sink_xruns, sink_describe,
                                      kOptions,  std::size(kOptions)};

} // namespace

const audiod_sink_ops* sink_ops() {
    return &kSinkOps;
}

} // namespace audiod::portaudio
