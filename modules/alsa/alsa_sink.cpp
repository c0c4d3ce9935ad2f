// The alsa sink: plays the mix on any ALSA PCM ("hw:0,0", "default", a
// plugin), driven by the device's own clock.
//
//   [sinks.speakers]
//   type = "alsa"
//   device = "hw:0,0"     # alsa_pcm.h's kOptions lists every option
//
// Negotiation is alsa_pcm.h's. The device runs non-blocking: `wait` polls
// until a quantum fits, so `write` never blocks.
//
// Recovery, all on the RT thread and without touching any stream: an
// underrun (-EPIPE) re-prepares the device; a suspend (-ESTRPIPE) resumes
// it (re-preparing if it cannot); both count as xruns. A device that is
// gone (-ENODEV, or anything else unrecoverable) ends the sink's cycle with
// that error: the server then moves its streams to another sink and reopens
// this one when the device comes back.
#include "alsa_module.h"
#include "alsa_pcm.h"
#include "device_options.h"

namespace audiod::alsa {

namespace {

int sink_open(const audiod_host*, const audiod_device_config* config, void** instance,
              audiod_open_info* info, char* error, size_t error_size) {
    std::string why;
    int code = 0;
    AlsaPcm* dev = open_pcm(*config, false, info, &why, &code);
    if (dev == nullptr) {
        set_error(error, error_size, why);
        return code;
    }
    *instance = dev;
    return 0;
}

int sink_start(void* instance) {
    const int err = snd_pcm_prepare(static_cast<AlsaPcm*>(instance)->pcm);
    return err < 0 ? err : 0;
}

int sink_wait(void* instance) {
    return wait_for_quantum(*static_cast<AlsaPcm*>(instance));
}

int sink_write(void* instance, const void* frames, uint32_t count) {
    auto& dev = *static_cast<AlsaPcm*>(instance);
    for (int attempt = 0; attempt < 2; ++attempt) {
        const snd_pcm_sframes_t n = snd_pcm_writei(dev.pcm, frames, count);
        if (n >= 0 || n == -EAGAIN) {
            return 0; // a full device drops this quantum rather than block us
        }
        if (const int err = recover(dev, static_cast<int>(n)); err < 0) {
            return err;
        }
    }
    return 0;
}

void sink_stop(void* instance) {
    snd_pcm_drop(static_cast<AlsaPcm*>(instance)->pcm);
}

void sink_close(void* instance) {
    close_pcm(static_cast<AlsaPcm*>(instance));
}

uint64_t sink_xruns(void* instance) {
    return static_cast<AlsaPcm*>(instance)->xruns.load(std::memory_order_relaxed);
}

constexpr audiod_sink_ops kSinkOps = {sink_open, sink_start,         sink_wait,  sink_write,
                                      sink_stop, sink_close,         sink_xruns, nullptr,
                                      kOptions,  std::size(kOptions)};

} // namespace

const audiod_sink_ops* sink_ops() {
    return &kSinkOps;
}

} // namespace audiod::alsa
