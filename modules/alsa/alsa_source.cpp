// The alsa source: records from any ALSA capture PCM, driven by the
// device's own clock; record streams take what it captures.
//
//   [sources.mic]
//   type = "alsa"
//   device = "hw:0,0"     # as for the sink (alsa_pcm.h's kOptions)
//
// Negotiation is alsa_pcm.h's. The device is started at once and runs
// non-blocking: `wait` polls until a quantum has been captured and `read`
// takes it. An overrun (-EPIPE: the device filled up) or a suspend
// (-ESTRPIPE) is recovered on the RT thread and counted as an xrun; what
// was lost reads as silence. A device that is gone ends the source's cycle
// with the error: its record streams move to the default sink's monitor and
// come back when the device does.
#include "alsa_module.h"
#include "alsa_pcm.h"
#include "device_options.h"

#include <cstring>

namespace audiod::alsa {

namespace {

int source_open(const audiod_host*, const audiod_device_config* config, void** instance,
                audiod_open_info* info, char* error, size_t error_size) {
    std::string why;
    int code = 0;
    AlsaPcm* dev = open_pcm(*config, true, info, &why, &code);
    if (dev == nullptr) {
        set_error(error, error_size, why);
        return code;
    }
    *instance = dev;
    return 0;
}

int source_start(void* instance) {
    auto& dev = *static_cast<AlsaPcm*>(instance);
    int err = snd_pcm_prepare(dev.pcm);
    if (err == 0) {
        err = snd_pcm_start(dev.pcm);
    }
    return err < 0 ? err : 0;
}

int source_wait(void* instance) {
    return wait_for_quantum(*static_cast<AlsaPcm*>(instance));
}

int source_read(void* instance, void* frames, uint32_t count) {
    auto& dev = *static_cast<AlsaPcm*>(instance);
    auto* out = static_cast<uint8_t*>(frames);
    uint32_t got = 0;
    for (int attempt = 0; attempt < 2 && got < count; ++attempt) {
        const snd_pcm_sframes_t n =
            snd_pcm_readi(dev.pcm, out + size_t{got} * dev.frame_bytes, count - got);
        if (n >= 0) {
            got += static_cast<uint32_t>(n);
            continue;
        }
        if (n == -EAGAIN) {
            break; // not captured yet: the rest of the quantum is silence
        }
        if (const int err = recover(dev, static_cast<int>(n)); err < 0) {
            return err;
        }
    }
    // Silence is all-zero bytes in every format the device may use.
    std::memset(out + size_t{got} * dev.frame_bytes, 0, size_t{count - got} * dev.frame_bytes);
    return 0;
}

void source_stop(void* instance) {
    snd_pcm_drop(static_cast<AlsaPcm*>(instance)->pcm);
}

void source_close(void* instance) {
    close_pcm(static_cast<AlsaPcm*>(instance));
}

uint64_t source_xruns(void* instance) {
    return static_cast<AlsaPcm*>(instance)->xruns.load(std::memory_order_relaxed);
}

constexpr audiod_source_ops kSourceOps = {
    source_open,  source_start, source_wait, source_read, source_stop,
    source_close, source_xruns, nullptr,     kOptions,    std::size(kOptions)};

} // namespace

const audiod_source_ops* source_ops() {
    return &kSourceOps;
}

} // namespace audiod::alsa
