// Sample formats shared by the server, the client library and the tools.
// The numeric values are part of the wire format and the public C API
// (enum audiod_format); never renumber them.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

namespace audiod {

enum class SampleFormat : uint32_t {
    invalid = 0,
    u8 = 1,
    s16le = 2,
    s24le = 3,   // 24 significant bits in a 32-bit container
    s24_3le = 4, // packed, 3 bytes
    s32le = 5,
    f32le = 6,
};

// Bytes one sample occupies; 0 for invalid or unknown values.
[[nodiscard]] unsigned sample_bytes(SampleFormat format) noexcept;

// Canonical lower-case name ("s16le"), or "invalid".
[[nodiscard]] std::string_view format_name(SampleFormat format) noexcept;

// Accepts canonical names and common aliases ("s16", "float", "f32").
[[nodiscard]] std::optional<SampleFormat> parse_format(std::string_view name) noexcept;

// A value received from outside: is it one of the enumerators?
[[nodiscard]] bool is_known_format(uint32_t raw) noexcept;

} // namespace audiod
