#include "pulse/stream_request.h"

#include <algorithm>

namespace audiod::pulse {

namespace {

constexpr size_t kMaxFormats = 16;

// A count of format infos, then each; false if there are more than we take.
bool read_formats(TagReader& fields, std::vector<FormatInfo>& formats) {
    uint8_t count = 0;
    fields.get_u8(count);
    if (count > kMaxFormats) {
        return false;
    }
    formats.resize(count);
    for (FormatInfo& format : formats) {
        fields.get_format_info(format);
    }
    return true;
}

} // namespace

std::optional<PlaybackRequest> read_playback_request(TagReader& fields, uint32_t version) {
    PlaybackRequest r;
    uint32_t sync_id = 0;
    fields.get_sample_spec(r.spec);
    fields.get_channel_map(r.map);
    fields.get_u32(r.sink_index);
    fields.get_string(r.sink_name);
    fields.get_u32(r.attributes.maxlength);
    fields.get_bool(r.corked);
    fields.get_u32(r.attributes.tlength);
    fields.get_u32(r.attributes.prebuf);
    fields.get_u32(r.attributes.minreq);
    fields.get_u32(sync_id);
    fields.get_channel_volumes(r.volume);
    bool ignored = false;
    if (version >= 12) {
        fields.get_bool(ignored); // no_remap
        fields.get_bool(ignored); // no_remix
        fields.get_bool(r.fix_format);
        fields.get_bool(r.fix_rate);
        fields.get_bool(r.fix_channels);
        fields.get_bool(r.no_move);
        fields.get_bool(ignored); // variable_rate
    }
    if (version >= 13) {
        fields.get_bool(r.muted);
        fields.get_bool(r.adjust_latency);
        fields.get_proplist(r.properties);
    }
    if (version >= 14) {
        fields.get_bool(r.volume_set);
        fields.get_bool(r.early_requests);
    }
    if (version >= 15) {
        fields.get_bool(r.muted_set);
        fields.get_bool(ignored); // dont_inhibit_auto_suspend
        fields.get_bool(r.fail_on_suspend);
    }
    if (version >= 17) {
        fields.get_bool(r.relative_volume);
    }
    if (version >= 18) {
        fields.get_bool(r.passthrough);
    }
    if (version >= 21) {
        if (!read_formats(fields, r.formats)) {
            return std::nullopt;
        }
    }
    if (!fields.done()) {
        return std::nullopt;
    }
    return r;
}

std::optional<RecordRequest> read_record_request(TagReader& fields, uint32_t version) {
    RecordRequest r;
    fields.get_sample_spec(r.spec);
    fields.get_channel_map(r.map);
    fields.get_u32(r.source_index);
    fields.get_string(r.source_name);
    fields.get_u32(r.attributes.maxlength);
    fields.get_bool(r.corked);
    fields.get_u32(r.attributes.fragsize);
    bool ignored = false;
    if (version >= 12) {
        for (int i = 0; i < 7; ++i) {
            fields.get_bool(ignored); // no_remap ... variable_rate
        }
    }
    if (version >= 13) {
        fields.get_bool(ignored); // peak_detect
        fields.get_bool(r.adjust_latency);
        fields.get_proplist(r.properties);
        fields.get_u32(r.direct_on_input);
    }
    if (version >= 14) {
        fields.get_bool(ignored); // early_requests
    }
    if (version >= 15) {
        fields.get_bool(ignored); // dont_inhibit_auto_suspend
        fields.get_bool(ignored); // fail_on_suspend
    }
    if (version >= 22) {
        if (!read_formats(fields, r.formats)) {
            return std::nullopt;
        }
        fields.get_channel_volumes(r.volume);
        fields.get_bool(r.muted);
        fields.get_bool(r.volume_set);
        fields.get_bool(r.muted_set);
        fields.get_bool(ignored); // relative_volume
        fields.get_bool(ignored); // passthrough
    }
    if (!fields.done()) {
        return std::nullopt;
    }
    return r;
}

std::optional<StreamCommandFields> read_stream_command(TagReader& fields, StreamFieldsKind kind) {
    StreamCommandFields f;
    fields.get_u32(f.channel);
    switch (kind) {
    case StreamFieldsKind::channel_only:
        break;
    case StreamFieldsKind::flag:
        fields.get_bool(f.flag);
        break;
    case StreamFieldsKind::time:
        fields.get_timeval(f.sent);
        break;
    case StreamFieldsKind::properties:
        fields.get_u32(f.mode);
        fields.get_proplist(f.properties);
        break;
    case StreamFieldsKind::removed_keys:
        for (std::optional<std::string> key; fields.get_string(key) && key;) {
            f.removed.push_back(*key);
        }
        break;
    case StreamFieldsKind::name: {
        std::string name;
        fields.get_string(name);
        set_property(f.properties, "media.name", name);
        f.mode = kUpdateReplace;
        break;
    }
    }
    if (!fields.done()) {
        return std::nullopt;
    }
    return f;
}

std::optional<StreamCommandShape> stream_command_shape(Command command) noexcept {
    using enum StreamFieldsKind;
    switch (command) {
    case Command::delete_playback_stream:
    case Command::drain_playback_stream:
    case Command::flush_playback_stream:
    case Command::trigger_playback_stream:
    case Command::prebuf_playback_stream:
        return StreamCommandShape{channel_only, false};
    case Command::cork_playback_stream:
        return StreamCommandShape{flag, false};
    case Command::get_playback_latency:
        return StreamCommandShape{time, false};
    case Command::update_playback_stream_proplist:
        return StreamCommandShape{properties, false};
    case Command::remove_playback_stream_proplist:
        return StreamCommandShape{removed_keys, false};
    case Command::set_playback_stream_name:
        return StreamCommandShape{name, false};
    case Command::delete_record_stream:
    case Command::flush_record_stream:
        return StreamCommandShape{channel_only, true};
    case Command::cork_record_stream:
        return StreamCommandShape{flag, true};
    case Command::get_record_latency:
        return StreamCommandShape{time, true};
    case Command::update_record_stream_proplist:
        return StreamCommandShape{properties, true};
    case Command::remove_record_stream_proplist:
        return StreamCommandShape{removed_keys, true};
    case Command::set_record_stream_name:
        return StreamCommandShape{name, true};
    default:
        return std::nullopt;
    }
}

bool update_properties(PropertyList& properties, uint32_t mode, PropertyList update) {
    switch (mode) {
    case kUpdateSet:
        properties = std::move(update);
        return true;
    case kUpdateMerge:
        properties.merge(update);
        return true;
    case kUpdateReplace:
        for (auto& [key, value] : update) {
            properties[key] = std::move(value);
        }
        return true;
    default:
        return false;
    }
}

float linear_gain(const ChannelVolumes& volume) noexcept {
    if (volume.values.empty()) {
        return 1.0f;
    }
    double sum = 0;
    for (const uint32_t value : volume.values) {
        sum += std::min<uint32_t>(value, 4 * kNormVolume);
    }
    const double level = sum / static_cast<double>(volume.values.size()) / kNormVolume;
    return static_cast<float>(std::min(level * level * level, 4.0));
}

} // namespace audiod::pulse
