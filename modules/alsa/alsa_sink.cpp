// The alsa sink: plays the mix on any ALSA PCM ("hw:0,0", "default", a
// plugin), driven by the device's own clock.
//
//   [sinks.speakers]
//   type = "alsa"
//   device = "hw:0,0"     # default: "default"
//   periods = 3           # device buffer in quanta (2..16; default 3)
//
// Negotiation: interleaved access; the sample format the device takes first
// of s16le, s32le, f32le; the server's rate and channel count exactly (until
// the server converts, a device that cannot do them is refused with a
// message saying what it offers); a period of one quantum where the device
// allows, and `periods` of them as its buffer. The device runs
// non-blocking: `wait` polls until a quantum fits, so `write` never blocks.
//
// Recovery, all on the RT thread and without touching any stream: an
// underrun (-EPIPE) re-prepares the device; a suspend (-ESTRPIPE) resumes
// it (re-preparing if it cannot); both count as xruns. A device that is
// gone (-ENODEV, or anything else unrecoverable) ends the sink's cycle with
// that error: the server then moves its streams to another sink and reopens
// this one when the device comes back.
#include "audiod/audiod.h"
#include "audiod/module.h"
#include "sink_options.h"

#include <alsa/asoundlib.h>

#include <atomic>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <new>
#include <string>
#include <time.h>

namespace {

struct AlsaSink {
    snd_pcm_t* pcm = nullptr;
    snd_pcm_uframes_t quantum = 0;
    snd_pcm_uframes_t buffer = 0;
    uint32_t rate = 0;
    int wait_ms = 0;
    std::atomic<uint64_t> xruns{0};
};

struct FormatChoice {
    snd_pcm_format_t alsa;
    int audiod;
};

constexpr FormatChoice kFormats[] = {
    {SND_PCM_FORMAT_S16_LE, AUDIOD_FORMAT_S16LE},
    {SND_PCM_FORMAT_S32_LE, AUDIOD_FORMAT_S32LE},
    {SND_PCM_FORMAT_FLOAT_LE, AUDIOD_FORMAT_F32LE},
};

void sleep_ns(long ns) {
    timespec t{ns / 1'000'000'000, ns % 1'000'000'000};
    while (nanosleep(&t, &t) != 0 && errno == EINTR) {
    }
}

// Negotiates the hardware parameters. Returns 0, or -errno with a message.
int configure(AlsaSink& sink, const audiod_sink_config& config, unsigned periods,
              audiod_sink_info* info, std::string* error) {
    snd_pcm_hw_params_t* hw = nullptr;
    snd_pcm_hw_params_alloca(&hw);
    snd_pcm_t* pcm = sink.pcm;
    int err = snd_pcm_hw_params_any(pcm, hw);
    if (err < 0) {
        *error = std::string("cannot read its capabilities: ") + snd_strerror(err);
        return err;
    }
    if ((err = snd_pcm_hw_params_set_access(pcm, hw, SND_PCM_ACCESS_RW_INTERLEAVED)) < 0) {
        *error = "it does not take interleaved writes";
        return err;
    }
    const FormatChoice* chosen = nullptr;
    for (const FormatChoice& format : kFormats) {
        if (snd_pcm_hw_params_test_format(pcm, hw, format.alsa) == 0) {
            chosen = &format;
            break;
        }
    }
    if (chosen == nullptr || snd_pcm_hw_params_set_format(pcm, hw, chosen->alsa) < 0) {
        *error = "it takes none of s16le, s32le, f32le";
        return -EINVAL;
    }
    if (snd_pcm_hw_params_set_channels(pcm, hw, config.channels) < 0) {
        unsigned lo = 0;
        unsigned hi = 0;
        snd_pcm_hw_params_get_channels_min(hw, &lo);
        snd_pcm_hw_params_get_channels_max(hw, &hi);
        *error = "it cannot play " + std::to_string(config.channels) + " channels (it offers " +
                 std::to_string(lo) + ".." + std::to_string(hi) + ")";
        return -EINVAL;
    }
    unsigned rate = config.rate;
    if (snd_pcm_hw_params_set_rate_near(pcm, hw, &rate, nullptr) < 0 || rate != config.rate) {
        *error = "it does not run at " + std::to_string(config.rate) +
                 " Hz (nearest: " + std::to_string(rate) + " Hz); resampling is not supported yet";
        return -EINVAL;
    }
    snd_pcm_uframes_t period = config.quantum;
    snd_pcm_hw_params_set_period_size_near(pcm, hw, &period, nullptr);
    snd_pcm_uframes_t buffer = std::max<snd_pcm_uframes_t>(period, config.quantum) * periods;
    snd_pcm_hw_params_set_buffer_size_near(pcm, hw, &buffer);
    if ((err = snd_pcm_hw_params(pcm, hw)) < 0) {
        *error = std::string("cannot apply its parameters: ") + snd_strerror(err);
        return err;
    }
    snd_pcm_hw_params_get_buffer_size(hw, &buffer);
    if (buffer < 2 * config.quantum) {
        *error = "its buffer (" + std::to_string(buffer) + " frames) is shorter than two quanta";
        return -EINVAL;
    }

    snd_pcm_sw_params_t* sw = nullptr;
    snd_pcm_sw_params_alloca(&sw);
    snd_pcm_sw_params_current(pcm, sw);
    // Start once the buffer is full, and wake us when a quantum fits.
    snd_pcm_sw_params_set_start_threshold(pcm, sw, buffer - buffer % config.quantum);
    snd_pcm_sw_params_set_avail_min(pcm, sw, config.quantum);
    if ((err = snd_pcm_sw_params(pcm, sw)) < 0) {
        *error = std::string("cannot apply its software parameters: ") + snd_strerror(err);
        return err;
    }
    sink.quantum = config.quantum;
    sink.buffer = buffer;
    sink.rate = config.rate;
    // Two quanta without room is a stalled device; `wait` returns to let the
    // server's loop see its stop flag either way.
    sink.wait_ms = static_cast<int>(2 * uint64_t{config.quantum} * 1000 / config.rate) + 10;
    info->format = chosen->audiod;
    info->latency_frames = static_cast<uint32_t>(buffer);
    return 0;
}

// Brings the device back after an error. Returns 0, or the error if the
// device is gone. Thread: rt.
int recover(AlsaSink& sink, int err) {
    if (err == -EPIPE) {
        sink.xruns.fetch_add(1, std::memory_order_relaxed);
        return snd_pcm_prepare(sink.pcm);
    }
    if (err == -ESTRPIPE) {
        sink.xruns.fetch_add(1, std::memory_order_relaxed);
        int rc = snd_pcm_resume(sink.pcm);
        if (rc == -EAGAIN || snd_pcm_state(sink.pcm) == SND_PCM_STATE_SUSPENDED) {
            // Still asleep: try again in a quantum (the device is our clock).
            sleep_ns(static_cast<long>(uint64_t{sink.quantum} * 1'000'000'000 / sink.rate));
            return 0;
        }
        if (rc < 0 || snd_pcm_state(sink.pcm) != SND_PCM_STATE_PREPARED) {
            rc = snd_pcm_prepare(sink.pcm);
        }
        return rc;
    }
    return err;
}

int alsa_open(const audiod_host*, const audiod_sink_config* config, void** instance,
              audiod_sink_info* info, char* error, size_t error_size) {
    const audiod::SinkOptions options(*config);
    if (const auto key = options.unknown_key({"device", "periods"})) {
        audiod::set_error(error, error_size,
                          "the alsa sink has no option '" + *key + "' (it takes device, periods)");
        return -EINVAL;
    }
    const std::string device = options.get("device").value_or("default");
    const std::string periods_text = options.get("periods").value_or("3");
    char* end = nullptr;
    const unsigned long periods = std::strtoul(periods_text.c_str(), &end, 10);
    if (*end != '\0' || periods < 2 || periods > 16) {
        audiod::set_error(error, error_size, "periods = " + periods_text + " is not in 2..16");
        return -EINVAL;
    }
    auto* sink = new (std::nothrow) AlsaSink;
    if (sink == nullptr) {
        return -ENOMEM;
    }
    int err = snd_pcm_open(&sink->pcm, device.c_str(), SND_PCM_STREAM_PLAYBACK, SND_PCM_NONBLOCK);
    if (err < 0) {
        audiod::set_error(error, error_size,
                          "cannot open ALSA device '" + device + "': " + snd_strerror(err));
        delete sink;
        return err;
    }
    std::string why;
    if ((err = configure(*sink, *config, static_cast<unsigned>(periods), info, &why)) < 0) {
        audiod::set_error(error, error_size, "ALSA device '" + device + "': " + why);
        snd_pcm_close(sink->pcm);
        delete sink;
        return err;
    }
    *instance = sink;
    return 0;
}

int alsa_start(void* instance) {
    auto* sink = static_cast<AlsaSink*>(instance);
    const int err = snd_pcm_prepare(sink->pcm);
    return err < 0 ? err : 0;
}

int alsa_wait(void* instance) {
    auto& sink = *static_cast<AlsaSink*>(instance);
    for (int attempt = 0; attempt < 3; ++attempt) {
        const snd_pcm_sframes_t avail = snd_pcm_avail_update(sink.pcm);
        if (avail < 0) {
            if (const int err = recover(sink, static_cast<int>(avail)); err < 0) {
                return err;
            }
            continue;
        }
        if (static_cast<snd_pcm_uframes_t>(avail) >= sink.quantum) {
            return 0;
        }
        const int ready = snd_pcm_wait(sink.pcm, sink.wait_ms);
        if (ready < 0) {
            if (const int err = recover(sink, ready); err < 0) {
                return err;
            }
        } else if (ready == 0) {
            return 0; // a silent device: `write` finds out what is wrong
        }
    }
    return 0;
}

int alsa_write(void* instance, const void* frames, uint32_t count) {
    auto& sink = *static_cast<AlsaSink*>(instance);
    for (int attempt = 0; attempt < 2; ++attempt) {
        const snd_pcm_sframes_t n = snd_pcm_writei(sink.pcm, frames, count);
        if (n >= 0 || n == -EAGAIN) {
            return 0; // a full device drops this quantum rather than block us
        }
        if (const int err = recover(sink, static_cast<int>(n)); err < 0) {
            return err;
        }
    }
    return 0;
}

void alsa_stop(void* instance) {
    snd_pcm_drop(static_cast<AlsaSink*>(instance)->pcm);
}

void alsa_close(void* instance) {
    auto* sink = static_cast<AlsaSink*>(instance);
    snd_pcm_close(sink->pcm);
    delete sink;
}

uint64_t alsa_xruns(void* instance) {
    return static_cast<AlsaSink*>(instance)->xruns.load(std::memory_order_relaxed);
}

constexpr audiod_sink_ops kOps = {alsa_open, alsa_start, alsa_wait, alsa_write,
                                  alsa_stop, alsa_close, alsa_xruns};
constexpr audiod_module kModule = {AUDIOD_MODULE_ABI_VERSION, "alsa",
                                   "plays on an ALSA PCM, driven by the device's clock", &kOps};

} // namespace

extern "C" __attribute__((visibility("default"))) const audiod_module* audiod_module_entry(void) {
    return &kModule;
}
