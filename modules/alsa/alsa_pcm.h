// The alsa sink and the alsa source: one ALSA PCM ("hw:0,0", "default", a
// plugin), opened non-blocking and driven by the device's own clock, for
// playing the mix or recording from it (module_ops.h makes their tables).
//
//   [sinks.speakers]              [sources.mic]
//   type = "alsa"                 type = "alsa"
//   device = "hw:0,0"             device = "hw:0,0"   # kOptions: every option
//
// The device runs non-blocking: `wait` polls until a quantum fits
// (playback) or has been captured, so `write` and `read` never block; a
// source's device is started at once.
//
// Recovery, all on the RT thread and without touching any stream: an
// underrun or overrun (-EPIPE) re-prepares the device (a capture device is
// started again); a suspend (-ESTRPIPE) resumes it, re-preparing if it
// cannot; both count as xruns, and what a source lost reads as silence. A
// device that is gone (-ENODEV, or anything else unrecoverable) ends the
// cycle with that error: the server then moves a sink's streams to another
// sink (a source's record streams to the default sink's monitor) and
// reopens the device when it comes back.
#pragma once

#include "audiod/module.h"
#include "module_ops.h"

#include <alsa/asoundlib.h>

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>

namespace audiod::alsa {

// What the alsa sink and source accept.
inline constexpr audiod_option_spec kOptions[] = {
    {"device", "string", "default", "",
     "the ALSA PCM: \"hw:0,0\", \"default\", a plugin's name (audiod --list-devices)"},
    {"periods", "integer", "3", "2..16", "the device's buffer, in quanta"},
};

class AlsaPcm {
public:
    // Opens `device` for playback or capture from the options (kOptions),
    // negotiates it (interleaved; the first of s16le, s32le, f32le; the
    // configured rate and channels exactly; a period of one quantum where
    // it allows, `periods` of them as the buffer) and fills `info`. nullptr
    // with a message in `error` and the error in `code` if it cannot.
    // Thread: control.
    static std::unique_ptr<AlsaPcm> open(const OpenRequest& request, audiod_open_info* info,
                                         std::string* error, int* code);
    // Thread: control.
    ~AlsaPcm();
    AlsaPcm(const AlsaPcm&) = delete;
    AlsaPcm& operator=(const AlsaPcm&) = delete;

    // Prepares the device; a capture device is also started. Thread: rt.
    int start_rt() noexcept;
    // Waits until a quantum fits (playback) or is captured, for at most
    // about two quanta; recovers on the way. Returns 0 or a fatal error.
    // Thread: rt.
    int wait_rt() noexcept;
    // One quantum; a full device drops it rather than block. Thread: rt.
    int write_rt(const void* frames, uint32_t count) noexcept;
    // One quantum; silence for what has not been captured. Thread: rt.
    int read_rt(void* frames, uint32_t count) noexcept;
    // Drops what the device holds. Thread: rt.
    void stop_rt() noexcept;

    // Thread: any.
    [[nodiscard]] uint64_t xruns() const noexcept { return xruns_.load(std::memory_order_relaxed); }

private:
    AlsaPcm() = default;
    // Negotiates the hardware parameters. Returns 0, or -errno with a
    // message. Thread: control.
    int configure(const audiod_device_config& config, unsigned periods, audiod_open_info* info,
                  std::string* error);
    // Brings the device back after an xrun (-EPIPE) or a suspend
    // (-ESTRPIPE), counting them; a capture device is started again.
    // Returns 0, or the error if the device is gone. Thread: rt.
    int recover_rt(int err) noexcept;

    snd_pcm_t* pcm_ = nullptr;
    bool capture_ = false;
    snd_pcm_uframes_t quantum_ = 0;
    snd_pcm_uframes_t buffer_ = 0;
    uint32_t rate_ = 0;
    uint32_t frame_bytes_ = 0;
    int wait_ms_ = 0;
    std::atomic<uint64_t> xruns_{0};
};

} // namespace audiod::alsa
