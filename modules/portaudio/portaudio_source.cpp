// The portaudio source: records from any device PortAudio reaches (ALSA,
// JACK, OSS), driven by the device's clock; record streams take what it
// captures.
//
//   [sources.mic]
//   type = "portaudio"
//   device = "USB"        # as for the sink: a name, a unique part, an index
//   host-api = "alsa"
//   latency-ms = 10       # PortAudio's suggested input latency (default: 3 quanta)
//   format = "s32"        # what PortAudio delivers: s16, s32 (default), f32
//   process = "own"       # as for the sink (remote_device.h)
//
// The same blocking stream on the source's RT thread as the sink
// (portaudio_sink.cpp says why): `wait` sleeps until a quantum has been
// captured (Pa_GetStreamReadAvailable), `read` takes it. An overflow that
// PortAudio reports (it dropped input the source was too late for) counts
// as an xrun; the frames read are still delivered. Any other error fails
// the source: its record streams move to the default sink's monitor and
// come back when the server has reopened it.
#include "device_options.h"
#include "pa_endpoint.h"
#include "portaudio_module.h"
#include "recovery_escape.h"

#include <cerrno>
#include <cstring>

namespace audiod::portaudio {

namespace {

int source_open(const audiod_host* host, const audiod_device_config* config, void** instance,
                audiod_open_info* info, char* error, size_t error_size) {
    std::string why;
    int code = 0;
    PaEndpoint* endpoint = open_endpoint(host, *config, true, info, &why, &code);
    if (endpoint == nullptr) {
        set_error(error, error_size, why);
        return code;
    }
    *instance = endpoint;
    return 0;
}

int source_start(void* instance) {
    return start_endpoint(*static_cast<PaEndpoint*>(instance));
}

int source_wait(void* instance) {
    return wait_endpoint(*static_cast<PaEndpoint*>(instance));
}

int source_read(void* instance, void* frames, uint32_t count) {
    auto& endpoint = *static_cast<PaEndpoint*>(instance);
    if (endpoint.remote != nullptr) {
        return read_remote(*endpoint.remote, frames, count);
    }
    auto& device = *endpoint.local;
    if (const int gone = check_present(device); gone != 0) {
        std::memset(frames, 0, size_t{count} * device.frame_bytes);
        return gone;
    }
    device.in_call.store(true, std::memory_order_relaxed);
    const PaError err = read_stream(device.stream, frames, count);
    device.in_call.store(false, std::memory_order_relaxed);
    if (err == paInputOverflowed) {
        device.xruns.fetch_add(1, std::memory_order_relaxed);
        return 0;
    }
    if (err != paNoError) {
        std::memset(frames, 0, size_t{count} * device.frame_bytes);
        return failing(device, error_code(err));
    }
    return 0;
}

// Nothing here: stopping a PortAudio stream can block (close_device says
// when), and the RT thread must end. close_device stops it.
void source_stop(void*) {}

void source_close(void* instance) {
    close_endpoint(static_cast<PaEndpoint*>(instance));
}

uint64_t source_xruns(void* instance) {
    return endpoint_xruns(*static_cast<PaEndpoint*>(instance));
}

size_t source_describe(void* instance, char* text, size_t size) {
    return describe_endpoint(*static_cast<const PaEndpoint*>(instance), text, size);
}

constexpr audiod_source_ops kSourceOps = {
    source_open,  source_start, source_wait,     source_read, source_stop,
    source_close, source_xruns, source_describe, kOptions,    std::size(kOptions)};

} // namespace

const audiod_source_ops* source_ops() {
    return &kSourceOps;
}

} // namespace audiod::portaudio
