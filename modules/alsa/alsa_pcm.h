// What the alsa sink and the alsa source share: one ALSA PCM opened
// non-blocking, its negotiation and its recovery from errors.
#pragma once

#include "audiod/module.h"

#include <alsa/asoundlib.h>

#include <atomic>
#include <cstdint>
#include <iterator>
#include <string>

namespace audiod::alsa {

// What the alsa sink and source accept.
inline constexpr audiod_option_spec kOptions[] = {
    {"device", "string", "default", "",
     "the ALSA PCM: \"hw:0,0\", \"default\", a plugin's name (audiod --list-devices)"},
    {"periods", "integer", "3", "2..16", "the device's buffer, in quanta"},
};

struct AlsaPcm {
    snd_pcm_t* pcm = nullptr;
    bool capture = false;
    snd_pcm_uframes_t quantum = 0;
    snd_pcm_uframes_t buffer = 0;
    uint32_t rate = 0;
    uint32_t frame_bytes = 0;
    int wait_ms = 0;
    std::atomic<uint64_t> xruns{0};
};

// Opens `device` for playback or capture from the sink or source options
// (kOptions), negotiates it (interleaved; the first of s16le, s32le,
// f32le; the configured rate and channels exactly; a period of one quantum
// where it allows, `periods` of them as the buffer) and fills `info`.
// Returns the PCM, or nullptr with a message in `error`. Thread: control.
AlsaPcm* open_pcm(const audiod_device_config& config, bool capture, audiod_open_info* info,
                  std::string* error, int* code);
void close_pcm(AlsaPcm* pcm);

// Brings the device back after an xrun (-EPIPE) or a suspend (-ESTRPIPE),
// counting them; a capture device is started again. Returns 0, or the error
// if the device is gone. Thread: rt.
int recover(AlsaPcm& pcm, int err);

// Waits until a quantum fits (playback) or is captured, for at most about
// two quanta; recovers on the way. Returns 0 or a fatal error. Thread: rt.
int wait_for_quantum(AlsaPcm& pcm);

} // namespace audiod::alsa
