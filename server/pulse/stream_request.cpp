#include "pulse/stream_request.h"

#include <algorithm>

namespace audiod::pulse {

namespace {

constexpr size_t kMaxFormats = 16;

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
        uint8_t count = 0;
        fields.get_u8(count);
        if (count > kMaxFormats) {
            return std::nullopt;
        }
        r.formats.resize(count);
        for (FormatInfo& format : r.formats) {
            fields.get_format_info(format);
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
        uint8_t count = 0;
        fields.get_u8(count);
        if (count > kMaxFormats) {
            return std::nullopt;
        }
        r.formats.resize(count);
        for (FormatInfo& format : r.formats) {
            fields.get_format_info(format);
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
