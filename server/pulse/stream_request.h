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

// The fields of a command on one stream, playback or record: its channel,
// then by kind a flag (CORK), the client's time (GET_*_LATENCY), a merge
// mode and a property list (UPDATE_*_PROPLIST), keys ended by a null
// string (REMOVE_*_PROPLIST), or a name (SET_*_NAME, taken as media.name
// replaced). nullopt if the packet is malformed.
enum class StreamFieldsKind { channel_only, flag, time, properties, removed_keys, name };

struct StreamCommandFields {
    uint32_t channel = 0;
    bool flag = false;
    Timeval sent;
    uint32_t mode = 0;
    PropertyList properties;
    std::vector<std::string> removed;
};

[[nodiscard]] std::optional<StreamCommandFields> read_stream_command(TagReader& fields,
                                                                     StreamFieldsKind kind);

// What a command on an existing stream carries, and whether it is one on
// a record stream; nullopt for any other command (CREATE_* included).
struct StreamCommandShape {
    StreamFieldsKind kind = StreamFieldsKind::channel_only;
    bool record = false;
};
[[nodiscard]] std::optional<StreamCommandShape> stream_command_shape(Command command) noexcept;

// UPDATE_*_PROPLIST's modes: set (replace the list), merge (add the keys
// not there), replace (overwrite the keys given). False for another mode.
inline constexpr uint32_t kUpdateSet = 0;
inline constexpr uint32_t kUpdateMerge = 1;
inline constexpr uint32_t kUpdateReplace = 2;
bool update_properties(PropertyList& properties, uint32_t mode, PropertyList update);

// A stream's volume as audiod's linear gain: PulseAudio's volumes are
// cubic (0x10000 is 100 %, full amplitude), the channels' average is taken.
[[nodiscard]] float linear_gain(const ChannelVolumes& volume) noexcept;

} // namespace audiod::pulse
