#include "protocol/sample_format.h"

#include <array>

namespace audiod {
namespace {

struct FormatEntry {
    SampleFormat format;
    std::string_view name;
    unsigned bytes;
};

constexpr std::array<FormatEntry, 6> kFormats{{
    {SampleFormat::u8, "u8", 1},
    {SampleFormat::s16le, "s16le", 2},
    {SampleFormat::s24le, "s24le", 4},
    {SampleFormat::s24_3le, "s24_3le", 3},
    {SampleFormat::s32le, "s32le", 4},
    {SampleFormat::f32le, "f32le", 4},
}};

struct Alias {
    std::string_view name;
    SampleFormat format;
};

constexpr std::array<Alias, 7> kAliases{{
    {"s16", SampleFormat::s16le},
    {"s24", SampleFormat::s24le},
    {"s24_3", SampleFormat::s24_3le},
    {"s32", SampleFormat::s32le},
    {"f32", SampleFormat::f32le},
    {"float", SampleFormat::f32le},
    {"float32", SampleFormat::f32le},
}};

const FormatEntry* find(SampleFormat format) noexcept {
    for (const auto& entry : kFormats) {
        if (entry.format == format) {
            return &entry;
        }
    }
    return nullptr;
}

} // namespace

unsigned sample_bytes(SampleFormat format) noexcept {
    const FormatEntry* entry = find(format);
    return entry ? entry->bytes : 0;
}

std::string_view format_name(SampleFormat format) noexcept {
    const FormatEntry* entry = find(format);
    return entry ? entry->name : std::string_view("invalid");
}

std::optional<SampleFormat> parse_format(std::string_view name) noexcept {
    for (const auto& entry : kFormats) {
        if (entry.name == name) {
            return entry.format;
        }
    }
    for (const auto& alias : kAliases) {
        if (alias.name == name) {
            return alias.format;
        }
    }
    return std::nullopt;
}

bool is_known_format(uint32_t raw) noexcept {
    return find(static_cast<SampleFormat>(raw)) != nullptr;
}

} // namespace audiod
