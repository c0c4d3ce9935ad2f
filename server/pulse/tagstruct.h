// The tag-struct: how every PulseAudio command packet is written. Each
// value is a type byte and then its data, big-endian:
//
//   't' string, NUL-terminated        'N' a null string
//   'L' u32   'B' u8   'R' u64   'r' s64   'U' microseconds (u64)
//   '1' / '0' true / false
//   'a' sample spec: u8 format, u8 channels, u32 rate
//   'x' arbitrary: u32 length, bytes
//   'T' timeval: u32 seconds, u32 microseconds
//   'm' channel map: u8 count, count x u8
//   'v' channel volumes: u8 count, count x u32
//   'V' volume: u32
//   'P' property list: (string key, u32 length, arbitrary value)...,
//       ended by a null string
//   'f' format info: u8 encoding, property list
//
// TagReader reads a packet a peer sent: hostile input. Every get checks
// the type byte and that the data is there, and a failed get leaves the
// reader failed for good (every later get fails too), so that a handler
// can read all its fields and check once. Nothing is allocated beyond
// what the packet holds, and nothing over the limits of protocol.h is
// taken. Thread: any (a reader or writer belongs to one thread).
#pragma once

#include "pulse/protocol.h"

#include <cstdint>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace audiod::pulse {

struct SampleSpec {
    uint8_t format = 0; // SampleFormat, unchecked
    uint8_t channels = 0;
    uint32_t rate = 0;
};

struct ChannelMap {
    std::vector<uint8_t> positions; // at most kMaxChannels
};

struct ChannelVolumes {
    std::vector<uint32_t> values; // at most kMaxChannels; 0x10000 is 100 %
};

// A property list: keys to byte values (strings carry their NUL).
using PropertyList = std::map<std::string, std::vector<uint8_t>>;

struct FormatInfo {
    uint8_t encoding = 0;
    PropertyList properties;
};

struct Timeval {
    uint32_t seconds = 0;
    uint32_t microseconds = 0;
};

// The wall clock now, as timing replies carry it (libpulse compares it with
// its own gettimeofday).
[[nodiscard]] Timeval timeval_now() noexcept;

class TagReader {
public:
    explicit TagReader(std::span<const uint8_t> data) noexcept
        : data_(data) {}

    bool get_u32(uint32_t& value);
    bool get_u8(uint8_t& value);
    bool get_u64(uint64_t& value);
    bool get_s64(int64_t& value);
    bool get_usec(uint64_t& value);
    bool get_bool(bool& value);
    // A string, or nullopt for a null string.
    bool get_string(std::optional<std::string>& value);
    // A string that must not be null.
    bool get_string(std::string& value);
    bool get_arbitrary(std::vector<uint8_t>& value, uint32_t max_bytes);
    bool get_sample_spec(SampleSpec& value);
    bool get_channel_map(ChannelMap& value);
    bool get_channel_volumes(ChannelVolumes& value);
    bool get_volume(uint32_t& value);
    bool get_timeval(Timeval& value);
    bool get_proplist(PropertyList& value);
    bool get_format_info(FormatInfo& value);

    // The type byte of the next value, or -1 at the end (or once failed).
    [[nodiscard]] int peek_type() const noexcept {
        return failed_ || at_ >= data_.size() ? -1 : data_[at_];
    }
    // Whether every get so far succeeded.
    [[nodiscard]] bool ok() const noexcept { return !failed_; }
    // Whether every get succeeded and the packet is read to its end.
    [[nodiscard]] bool done() const noexcept { return !failed_ && at_ == data_.size(); }
    // What is left unread.
    [[nodiscard]] size_t remaining() const noexcept { return data_.size() - at_; }

private:
    bool tag(uint8_t type);
    bool raw(void* out, size_t bytes);
    bool raw_u32(uint32_t& value);
    bool raw_u64(uint64_t& value);
    bool fail() {
        failed_ = true;
        return false;
    }

    std::span<const uint8_t> data_;
    size_t at_ = 0;
    bool failed_ = false;
};

class TagWriter {
public:
    TagWriter& put_u32(uint32_t value);
    TagWriter& put_u8(uint8_t value);
    TagWriter& put_u64(uint64_t value);
    TagWriter& put_s64(int64_t value);
    TagWriter& put_usec(uint64_t value);
    TagWriter& put_bool(bool value);
    TagWriter& put_string(const std::string& value);
    TagWriter& put_null_string();
    TagWriter& put_optional_string(const std::optional<std::string>& value);
    TagWriter& put_arbitrary(std::span<const uint8_t> value);
    TagWriter& put_sample_spec(const SampleSpec& value);
    TagWriter& put_channel_map(const ChannelMap& value);
    TagWriter& put_channel_volumes(const ChannelVolumes& value);
    TagWriter& put_volume(uint32_t value);
    TagWriter& put_timeval(const Timeval& value);
    TagWriter& put_proplist(const PropertyList& value);
    TagWriter& put_format_info(const FormatInfo& value);

    [[nodiscard]] const std::vector<uint8_t>& bytes() const noexcept { return bytes_; }
    [[nodiscard]] std::vector<uint8_t> take() noexcept { return std::move(bytes_); }

private:
    void raw_u32(uint32_t value);
    void raw_u64(uint64_t value);

    std::vector<uint8_t> bytes_;
};

// A property's value as a string: the bytes up to their NUL, or nullopt if
// it is not a string (no NUL at the end, or one inside).
[[nodiscard]] std::optional<std::string> property_string(const PropertyList& properties,
                                                         const std::string& key);
// Sets a string property (stored with its NUL, as libpulse stores them).
void set_property(PropertyList& properties, const std::string& key, const std::string& value);

} // namespace audiod::pulse
