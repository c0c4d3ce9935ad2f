#include "pulse/sample_spec.h"

#include "audiod/audiod.h"

#include <array>
#include <charconv>

namespace audiod::pulse {

namespace {

constexpr std::array<const char*, kSampleFormatCount> kFormatNames = {
    "u8",    "aLaw",  "uLaw",  "s16le", "s16be",    "float32le", "float32be",
    "s32le", "s32be", "s24le", "s24be", "s24-32le", "s24-32be"};

constexpr uint8_t kEncodingPcm = 1;

// A format info's values are JSON: a string in quotes, a number bare.
std::optional<std::string> json_string(const PropertyList& properties, const std::string& key) {
    const auto text = property_string(properties, key);
    if (!text || text->size() < 2 || text->front() != '"' || text->back() != '"') {
        return std::nullopt;
    }
    return text->substr(1, text->size() - 2);
}

std::optional<uint32_t> json_u32(const PropertyList& properties, const std::string& key) {
    const auto text = property_string(properties, key);
    uint32_t value = 0;
    if (!text || text->empty() ||
        std::from_chars(text->data(), text->data() + text->size(), value).ptr !=
            text->data() + text->size()) {
        return std::nullopt;
    }
    return value;
}

} // namespace

std::optional<audiod::SampleFormat> audiod_format(uint8_t pulse_format) noexcept {
    switch (static_cast<SampleFormat>(pulse_format)) {
    case SampleFormat::u8:
        return audiod::SampleFormat::u8;
    case SampleFormat::s16le:
        return audiod::SampleFormat::s16le;
    case SampleFormat::float32le:
        return audiod::SampleFormat::f32le;
    case SampleFormat::s32le:
        return audiod::SampleFormat::s32le;
    case SampleFormat::s24le:
        return audiod::SampleFormat::s24_3le;
    case SampleFormat::s24_32le:
        return audiod::SampleFormat::s24le;
    default:
        return std::nullopt;
    }
}

uint8_t pulse_format(audiod::SampleFormat format) noexcept {
    switch (format) {
    case audiod::SampleFormat::u8:
        return static_cast<uint8_t>(SampleFormat::u8);
    case audiod::SampleFormat::f32le:
        return static_cast<uint8_t>(SampleFormat::float32le);
    case audiod::SampleFormat::s32le:
        return static_cast<uint8_t>(SampleFormat::s32le);
    case audiod::SampleFormat::s24_3le:
        return static_cast<uint8_t>(SampleFormat::s24le);
    case audiod::SampleFormat::s24le:
        return static_cast<uint8_t>(SampleFormat::s24_32le);
    default:
        return static_cast<uint8_t>(SampleFormat::s16le);
    }
}

std::string format_name(uint8_t pulse_format) {
    return pulse_format < kFormatNames.size() ? kFormatNames[pulse_format] : "";
}

std::string unplayable(const SampleSpec& spec) {
    if (!audiod_format(spec.format)) {
        const std::string name = format_name(spec.format);
        return "sample format " + (name.empty() ? std::to_string(spec.format) : name) +
               " is not played (u8, s16le, s24le, s24-32le, s32le, float32le are)";
    }
    if (spec.rate < AUDIOD_MIN_RATE || spec.rate > AUDIOD_MAX_RATE) {
        return "rate " + std::to_string(spec.rate) + " Hz is outside " +
               std::to_string(AUDIOD_MIN_RATE) + ".." + std::to_string(AUDIOD_MAX_RATE) + " Hz";
    }
    if (spec.channels < 1 || spec.channels > AUDIOD_MAX_CHANNELS) {
        return std::to_string(spec.channels) + " channels: 1 to " +
               std::to_string(AUDIOD_MAX_CHANNELS) + " are played";
    }
    return "";
}

uint32_t frame_bytes(const SampleSpec& spec) noexcept {
    const auto format = audiod_format(spec.format);
    return format ? sample_bytes(*format) * spec.channels : 0;
}

FormatInfo pcm_format_info(const SampleSpec& spec, const ChannelMap& map) {
    (void)map; // the channel map travels in the reply's own field
    FormatInfo info;
    info.encoding = kEncodingPcm;
    // Appended, not added up: GCC 12 at -O3 takes "\"" + name for an
    // overlapping memcpy (-Wrestrict).
    std::string quoted(1, '"');
    quoted.append(format_name(spec.format)).push_back('"');
    set_property(info.properties, "format.sample_format", quoted);
    set_property(info.properties, "format.rate", std::to_string(spec.rate));
    set_property(info.properties, "format.channels", std::to_string(spec.channels));
    return info;
}

std::optional<SampleSpec> spec_of(const FormatInfo& format) {
    if (format.encoding != kEncodingPcm) {
        return std::nullopt;
    }
    const auto name = json_string(format.properties, "format.sample_format");
    const auto rate = json_u32(format.properties, "format.rate");
    const auto channels = json_u32(format.properties, "format.channels");
    if (!name || !rate || !channels || *channels > 255) {
        return std::nullopt;
    }
    for (size_t i = 0; i < kFormatNames.size(); ++i) {
        if (*name == kFormatNames[i]) {
            return SampleSpec{static_cast<uint8_t>(i), static_cast<uint8_t>(*channels), *rate};
        }
    }
    return std::nullopt;
}

} // namespace audiod::pulse
