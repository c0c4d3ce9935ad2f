#include "alsa_pcm.h"

#include "audiod/audiod.h"
#include "device_options.h"

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <time.h>

namespace audiod::alsa {

namespace {

struct FormatChoice {
    snd_pcm_format_t alsa;
    int audiod;
    uint32_t bytes;
};

constexpr FormatChoice kFormats[] = {
    {SND_PCM_FORMAT_S16_LE, AUDIOD_FORMAT_S16LE, 2},
    {SND_PCM_FORMAT_S32_LE, AUDIOD_FORMAT_S32LE, 4},
    {SND_PCM_FORMAT_FLOAT_LE, AUDIOD_FORMAT_F32LE, 4},
};

void sleep_ns(long ns) {
    timespec t{ns / 1'000'000'000, ns % 1'000'000'000};
    while (nanosleep(&t, &t) != 0 && errno == EINTR) {
    }
}

} // namespace

int AlsaPcm::configure(const audiod_device_config& config, unsigned periods, audiod_open_info* info,
                       std::string* error) {
    snd_pcm_hw_params_t* hw = nullptr;
    snd_pcm_hw_params_alloca(&hw);
    snd_pcm_t* pcm = pcm_;
    int err = snd_pcm_hw_params_any(pcm, hw);
    if (err < 0) {
        *error = std::string("cannot read its capabilities: ") + snd_strerror(err);
        return err;
    }
    if ((err = snd_pcm_hw_params_set_access(pcm, hw, SND_PCM_ACCESS_RW_INTERLEAVED)) < 0) {
        *error = "it does not take interleaved access";
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
        *error = "it has no " + std::to_string(config.channels) + "-channel mode (it offers " +
                 std::to_string(lo) + ".." + std::to_string(hi) + "; set `channels`)";
        return -EINVAL;
    }
    unsigned rate = config.rate;
    if (snd_pcm_hw_params_set_rate_near(pcm, hw, &rate, nullptr) < 0 || rate != config.rate) {
        *error = "it does not run at " + std::to_string(config.rate) +
                 " Hz (nearest: " + std::to_string(rate) +
                 " Hz; set `rate = " + std::to_string(rate) + "` and the server converts)";
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
    // Playback starts once the buffer is full; capture is started
    // explicitly. Either way wake us when a quantum is ready.
    snd_pcm_sw_params_set_start_threshold(pcm, sw, capture_ ? 1 : buffer - buffer % config.quantum);
    snd_pcm_sw_params_set_avail_min(pcm, sw, config.quantum);
    if ((err = snd_pcm_sw_params(pcm, sw)) < 0) {
        *error = std::string("cannot apply its software parameters: ") + snd_strerror(err);
        return err;
    }
    quantum_ = config.quantum;
    buffer_ = buffer;
    rate_ = config.rate;
    frame_bytes_ = chosen->bytes * config.channels;
    // Two quanta without progress is a stalled device; `wait` returns to let
    // the server's loop see its stop flag either way.
    wait_ms_ = static_cast<int>(2 * uint64_t{config.quantum} * 1000 / config.rate) + 10;
    info->format = chosen->audiod;
    info->latency_frames = static_cast<uint32_t>(capture_ ? config.quantum : buffer);
    return 0;
}

std::unique_ptr<AlsaPcm> AlsaPcm::open(const OpenRequest& request, audiod_open_info* info,
                                       std::string* error, int* code) {
    const audiod_device_config& config = request.config;
    const bool capture = request.capture;
    const DeviceOptions options(config);
    if (auto refusal =
            options.check_keys(kOptions, capture ? "the alsa source" : "the alsa sink")) {
        return refuse(error, code, std::move(*refusal), -EINVAL);
    }
    const std::string device = options.get("device").value_or("default");
    const std::string periods_text = options.get("periods").value_or("3");
    char* end = nullptr;
    const unsigned long periods = std::strtoul(periods_text.c_str(), &end, 10);
    if (*end != '\0' || periods < 2 || periods > 16) {
        return refuse(error, code, "periods = " + periods_text + " is not in 2..16", -EINVAL);
    }
    std::unique_ptr<AlsaPcm> dev(new AlsaPcm);
    dev->capture_ = capture;
    int err =
        snd_pcm_open(&dev->pcm_, device.c_str(),
                     capture ? SND_PCM_STREAM_CAPTURE : SND_PCM_STREAM_PLAYBACK, SND_PCM_NONBLOCK);
    if (err < 0) {
        return refuse(error, code, "cannot open ALSA device '" + device + "': " + snd_strerror(err),
                      err);
    }
    std::string why;
    if ((err = dev->configure(config, static_cast<unsigned>(periods), info, &why)) < 0) {
        return refuse(error, code, "ALSA device '" + device + "': " + why, err);
    }
    return dev;
}

AlsaPcm::~AlsaPcm() {
    if (pcm_ != nullptr) {
        snd_pcm_close(pcm_);
    }
}

int AlsaPcm::start_rt() noexcept {
    int err = snd_pcm_prepare(pcm_);
    if (err == 0 && capture_) {
        err = snd_pcm_start(pcm_);
    }
    return err < 0 ? err : 0;
}

int AlsaPcm::wait_rt() noexcept {
    for (int attempt = 0; attempt < 3; ++attempt) {
        const snd_pcm_sframes_t avail = snd_pcm_avail_update(pcm_);
        if (avail < 0) {
            if (const int err = recover_rt(static_cast<int>(avail)); err < 0) {
                return err;
            }
            continue;
        }
        if (static_cast<snd_pcm_uframes_t>(avail) >= quantum_) {
            return 0;
        }
        const int ready = snd_pcm_wait(pcm_, wait_ms_);
        if (ready < 0) {
            if (const int err = recover_rt(ready); err < 0) {
                return err;
            }
        } else if (ready == 0) {
            return 0; // a silent device: the transfer finds out what is wrong
        }
    }
    return 0;
}

int AlsaPcm::write_rt(const void* frames, uint32_t count) noexcept {
    for (int attempt = 0; attempt < 2; ++attempt) {
        const snd_pcm_sframes_t n = snd_pcm_writei(pcm_, frames, count);
        if (n >= 0 || n == -EAGAIN) {
            return 0; // a full device drops this quantum rather than block us
        }
        if (const int err = recover_rt(static_cast<int>(n)); err < 0) {
            return err;
        }
    }
    return 0;
}

int AlsaPcm::read_rt(void* frames, uint32_t count) noexcept {
    auto* out = static_cast<uint8_t*>(frames);
    uint32_t got = 0;
    for (int attempt = 0; attempt < 2 && got < count; ++attempt) {
        const snd_pcm_sframes_t n =
            snd_pcm_readi(pcm_, out + size_t{got} * frame_bytes_, count - got);
        if (n >= 0) {
            got += static_cast<uint32_t>(n);
            continue;
        }
        if (n == -EAGAIN) {
            break; // not captured yet: the rest of the quantum is silence
        }
        if (const int err = recover_rt(static_cast<int>(n)); err < 0) {
            return err;
        }
    }
    // Silence is all-zero bytes in every format the device may use.
    std::memset(out + size_t{got} * frame_bytes_, 0, size_t{count - got} * frame_bytes_);
    return 0;
}

void AlsaPcm::stop_rt() noexcept {
    snd_pcm_drop(pcm_);
}

int AlsaPcm::recover_rt(int err) noexcept {
    if (err == -EPIPE) {
        xruns_.fetch_add(1, std::memory_order_relaxed);
        int rc = snd_pcm_prepare(pcm_);
        if (rc == 0 && capture_) {
            rc = snd_pcm_start(pcm_);
        }
        return rc;
    }
    if (err == -ESTRPIPE) {
        xruns_.fetch_add(1, std::memory_order_relaxed);
        int rc = snd_pcm_resume(pcm_);
        const snd_pcm_state_t state = snd_pcm_state(pcm_);
        if (rc == -EAGAIN || (rc == 0 && state == SND_PCM_STATE_SUSPENDED)) {
            // Still asleep (a plugin device says so by staying suspended,
            // since ioplug drops its resume result): try again in a
            // quantum (the device is our clock).
            sleep_ns(static_cast<long>(uint64_t{quantum_} * 1'000'000'000 / rate_));
            return 0;
        }
        if (rc == 0 && state == SND_PCM_STATE_RUNNING) {
            return 0; // resumed where it stopped
        }
        // No resume support (-ENOSYS, many USB devices) or a failed one:
        // start afresh.
        if (rc < 0 || state != SND_PCM_STATE_PREPARED) {
            rc = snd_pcm_prepare(pcm_);
        }
        if (rc == 0 && capture_ && snd_pcm_state(pcm_) == SND_PCM_STATE_PREPARED) {
            rc = snd_pcm_start(pcm_);
        }
        return rc;
    }
    return err;
}

} // namespace audiod::alsa
