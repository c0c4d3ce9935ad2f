// Up- and down-mixing between channel counts, with the standard channel
// maps (those of WAV files and ALSA's defaults):
//
//   1 mono (FC)             5 FL FR FC RL RR
//   2 FL FR                 6 FL FR FC LFE RL RR        (5.1)
//   3 FL FR FC              7 FL FR FC LFE RC SL SR     (6.1)
//   4 FL FR RL RR           8 FL FR FC LFE RL RR SL SR  (7.1)
//
// A matrix built once, on the control thread, when a stream is attached to
// a sink; applied per frame on the RT thread. The rules:
//   - a position both sides have is copied;
//   - mono goes to FL and FR (else FC), at full level on each;
//   - to mono: the average of every channel but LFE;
//   - a centre the output lacks goes to FL and FR at -3 dB (0.7071);
//     rear and side channels go to the output's rear/side on the same side
//     if it has one, else to FL/FR at -3 dB; a rear centre to both;
//   - LFE is dropped unless the output has LFE;
//   - each output row whose coefficients add up to more than 1 is scaled
//     down to 1, so a downmix never clips. 5.1 to stereo is thus
//     L = (FL + 0.7071 FC + 0.7071 RL) / 2.4142, R likewise.
#pragma once

#include "audiod/audiod.h"

#include <cstdint>

namespace audiod {

inline constexpr uint32_t kMaxChannels = AUDIOD_MAX_CHANNELS;

struct ChannelMix {
    uint32_t in = 0;
    uint32_t out = 0;
    bool identity = false;
    // coefficient[o][i]: how much of input channel i goes to output o.
    float coefficient[kMaxChannels][kMaxChannels] = {};
};

// For 1..kMaxChannels on each side. Thread: any (not RT: not needed there).
[[nodiscard]] ChannelMix make_channel_mix(uint32_t in_channels, uint32_t out_channels) noexcept;

} // namespace audiod
