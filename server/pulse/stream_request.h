// CREATE_PLAYBACK_STREAM's fields, read by the client's protocol version:
//
//   sample spec, channel map, sink index, sink name, maxlength, corked,
//   tlength, prebuf, minreq, sync id, channel volumes
//   v12: no_remap, no_remix, fix_format, fix_rate, fix_channels, no_move,
//        variable_rate
//   v13: muted, adjust_latency, property list
//   v14: volume_set, early_requests
//   v15: muted_set, dont_inhibit_auto_suspend, fail_on_suspend
//   v17: relative_volume
//   v18: passthrough
//   v21: a count of format infos, then each
//
// (Versions below 13 sent the stream's name first; they are not served.)
// A packet that is short, long or has a wrong type anywhere is refused.
// Thread: any (pure).
#pragma once

#include "pulse/buffer_attributes.h"
#include "pulse/tagstruct.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace audiod::pulse {

struct PlaybackRequest {
    SampleSpec spec;
    ChannelMap map;
    uint32_t sink_index = kInvalidIndex;
    std::optional<std::string> sink_name;
    BufferAttributes attributes;
    bool corked = false;
    ChannelVolumes volume;
    bool fix_format = false;
    bool fix_rate = false;
    bool fix_channels = false;
    bool no_move = false;
    bool muted = false;
    bool adjust_latency = false;
    PropertyList properties;
    bool volume_set = true; // before v14 the volume was always meant
    bool early_requests = false;
    bool muted_set = false;
    bool fail_on_suspend = false;
    bool relative_volume = false;
    bool passthrough = false;
    std::vector<FormatInfo> formats;
};

// The request, or nullopt if the packet is malformed.
[[nodiscard]] std::optional<PlaybackRequest> read_playback_request(TagReader& fields,
                                                                   uint32_t version);

// CREATE_RECORD_STREAM's fields:
//
//   sample spec, channel map, source index, source name, maxlength,
//   corked, fragsize
//   v12: the seven flags of playback's v12
//   v13: peak_detect, adjust_latency, property list, direct_on_input
//   v14: early_requests
//   v15: dont_inhibit_auto_suspend, fail_on_suspend
//   v22: a count of format infos and each, channel volumes, muted,
//        volume_set, muted_set, relative_volume, passthrough
struct RecordRequest {
    SampleSpec spec;
    ChannelMap map;
    uint32_t source_index = kInvalidIndex;
    std::optional<std::string> source_name;
    BufferAttributes attributes;
    bool corked = false;
    bool adjust_latency = false;
    PropertyList properties;
    uint32_t direct_on_input = kInvalidIndex;
    std::vector<FormatInfo> formats;
    ChannelVolumes volume;
    bool muted = false;
    bool volume_set = false;
    bool muted_set = false;
};

[[nodiscard]] std::optional<RecordRequest> read_record_request(TagReader& fields, uint32_t version);

// A stream's volume as audiod's linear gain: PulseAudio's volumes are
// cubic (0x10000 is 100 %, full amplitude), the channels' average is taken.
[[nodiscard]] float linear_gain(const ChannelVolumes& volume) noexcept;

} // namespace audiod::pulse
