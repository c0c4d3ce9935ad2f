// The jack sink: plays the mix into a JACK graph, driven by JACK's clock.
//
//   [sinks.studio]
//   type = "jack"
//   server = "default"       # the JACK server's name (default: $JACK_DEFAULT_SERVER,
//                            # else "default"); never started by the sink
//   client-name = "audiod-studio"  # the default: "audiod-" and the sink's name
//   connect = "physical"     # the graph's physical playback ports (default);
//                            # "none"; a client's name ("jack_rec"); or a
//                            # regular expression on port names ("^sys.*:play")
//   latency-ms = 10          # what the sink keeps queued (default: JACK's
//                            # period and a quantum)
//
// The sink's rate must be JACK's. Its ports are out_1 … out_N, the i-th
// connected to the i-th port `connect` names. Why a module of its own
// beside PortAudio's JACK host API: libjack closes a client whose server
// died and tells it so, and a new client joins a restarted server, so this
// sink fails when jackd goes and comes back with it; PortAudio's JACK
// stream can neither be stopped nor closed once its server is gone (see
// jack_link.h and the README).
#include "audiod/audiod.h"
#include "device_options.h"
#include "jack_link.h"
#include "jack_module.h"

namespace audiod::jack {

namespace {

int sink_open(const audiod_host* host, const audiod_device_config* config, void** instance,
              audiod_open_info* info, char* error, size_t error_size) {
    std::string why;
    int code = 0;
    std::unique_ptr<JackLink> opened = JackLink::open(host, *config, false, &why, &code);
    if (!opened) {
        set_error(error, error_size, why);
        return code;
    }
    info->format = AUDIOD_FORMAT_F32LE;
    info->latency_frames = opened->latency_frames();
    *instance = opened.release();
    return 0;
}

int sink_start(void* instance) {
    link_of(instance).start();
    return 0;
}

int sink_wait(void* instance) {
    return link_of(instance).wait_for_quantum();
}

int sink_write(void* instance, const void* frames, uint32_t) {
    link_of(instance).write(static_cast<const float*>(frames));
    return 0;
}

void sink_stop(void* instance) {
    link_of(instance).stop();
}

void sink_close(void* instance) {
    close_link(std::unique_ptr<JackLink>(static_cast<JackLink*>(instance)));
}

uint64_t sink_xruns(void* instance) {
    return link_of(instance).xruns();
}

size_t sink_describe(void* instance, char* text, size_t size) {
    return link_of(instance).describe(text, size);
}

constexpr audiod_sink_ops kSinkOps = {sink_open, sink_start,         sink_wait,  sink_write,
                                      sink_stop, sink_close,         sink_xruns, sink_describe,
                                      kOptions,  std::size(kOptions)};

} // namespace

const audiod_sink_ops* sink_ops() {
    return &kSinkOps;
}

} // namespace audiod::jack
