#include "pulse/tagstruct.h"

#include <sys/time.h>

#include <algorithm>
#include <cstring>

namespace audiod::pulse {

Timeval timeval_now() noexcept {
    timeval now{};
    ::gettimeofday(&now, nullptr);
    return {static_cast<uint32_t>(now.tv_sec), static_cast<uint32_t>(now.tv_usec)};
}

namespace {

enum : uint8_t {
    kString = 't',
    kNullString = 'N',
    kU32 = 'L',
    kU8 = 'B',
    kU64 = 'R',
    kS64 = 'r',
    kSampleSpec = 'a',
    kArbitrary = 'x',
    kTrue = '1',
    kFalse = '0',
    kTimeval = 'T',
    kUsec = 'U',
    kChannelMap = 'm',
    kChannelVolumes = 'v',
    kProplist = 'P',
    kVolume = 'V',
    kFormatInfo = 'f',
};

// A property key as PulseAudio accepts them: printable ASCII, 1 to 255.
bool valid_key(const std::string& key) {
    return !key.empty() && key.size() < 256 &&
           std::all_of(key.begin(), key.end(), [](char c) { return c >= 0x20 && c < 0x7f; });
}

} // namespace

bool TagReader::raw(void* out, size_t bytes) {
    if (failed_ || data_.size() - at_ < bytes) {
        return fail();
    }
    if (bytes > 0) { // an empty map or list has no storage: memcpy must not see null
        std::memcpy(out, data_.data() + at_, bytes);
    }
    at_ += bytes;
    return true;
}

bool TagReader::raw_u32(uint32_t& value) {
    uint8_t b[4];
    if (!raw(b, 4)) {
        return false;
    }
    value = uint32_t{b[0]} << 24 | uint32_t{b[1]} << 16 | uint32_t{b[2]} << 8 | b[3];
    return true;
}

bool TagReader::raw_u64(uint64_t& value) {
    uint32_t high = 0;
    uint32_t low = 0;
    if (!raw_u32(high) || !raw_u32(low)) {
        return false;
    }
    value = uint64_t{high} << 32 | low;
    return true;
}

bool TagReader::tag(uint8_t type) {
    if (failed_ || at_ >= data_.size() || data_[at_] != type) {
        return fail();
    }
    ++at_;
    return true;
}

bool TagReader::get_u32(uint32_t& value) {
    return tag(kU32) && raw_u32(value);
}

bool TagReader::get_u8(uint8_t& value) {
    return tag(kU8) && raw(&value, 1);
}

bool TagReader::get_u64(uint64_t& value) {
    return tag(kU64) && raw_u64(value);
}

bool TagReader::get_s64(int64_t& value) {
    uint64_t bits = 0;
    if (!tag(kS64) || !raw_u64(bits)) {
        return false;
    }
    value = static_cast<int64_t>(bits);
    return true;
}

bool TagReader::get_usec(uint64_t& value) {
    return tag(kUsec) && raw_u64(value);
}

bool TagReader::get_bool(bool& value) {
    if (failed_ || at_ >= data_.size()) {
        return fail();
    }
    if (data_[at_] == kTrue || data_[at_] == kFalse) {
        value = data_[at_++] == kTrue;
        return true;
    }
    return fail();
}

bool TagReader::get_string(std::optional<std::string>& value) {
    if (failed_ || at_ >= data_.size()) {
        return fail();
    }
    if (data_[at_] == kNullString) {
        ++at_;
        value.reset();
        return true;
    }
    if (!tag(kString)) {
        return false;
    }
    const auto* begin = data_.data() + at_;
    const auto* end = static_cast<const uint8_t*>(std::memchr(begin, 0, data_.size() - at_));
    if (end == nullptr) {
        return fail(); // no NUL before the end of the packet
    }
    value.emplace(reinterpret_cast<const char*>(begin), static_cast<size_t>(end - begin));
    at_ += static_cast<size_t>(end - begin) + 1;
    return true;
}

bool TagReader::get_string(std::string& value) {
    std::optional<std::string> read;
    if (!get_string(read) || !read) {
        return fail();
    }
    value = std::move(*read);
    return true;
}

bool TagReader::get_arbitrary(std::vector<uint8_t>& value, uint32_t max_bytes) {
    uint32_t length = 0;
    if (!tag(kArbitrary) || !raw_u32(length)) {
        return false;
    }
    if (length > max_bytes || length > remaining()) {
        return fail();
    }
    value.assign(data_.begin() + static_cast<std::ptrdiff_t>(at_),
                 data_.begin() + static_cast<std::ptrdiff_t>(at_ + length));
    at_ += length;
    return true;
}

bool TagReader::get_sample_spec(SampleSpec& value) {
    return tag(kSampleSpec) && raw(&value.format, 1) && raw(&value.channels, 1) &&
           raw_u32(value.rate);
}

bool TagReader::get_channel_map(ChannelMap& value) {
    uint8_t count = 0;
    if (!tag(kChannelMap) || !raw(&count, 1)) {
        return false;
    }
    if (count > kMaxChannels || count > remaining()) {
        return fail();
    }
    value.positions.resize(count);
    return raw(value.positions.data(), count);
}

bool TagReader::get_channel_volumes(ChannelVolumes& value) {
    uint8_t count = 0;
    if (!tag(kChannelVolumes) || !raw(&count, 1)) {
        return false;
    }
    if (count > kMaxChannels || size_t{count} * 4 > remaining()) {
        return fail();
    }
    value.values.resize(count);
    for (uint32_t& volume : value.values) {
        if (!raw_u32(volume)) {
            return false;
        }
    }
    return true;
}

bool TagReader::get_volume(uint32_t& value) {
    return tag(kVolume) && raw_u32(value);
}

bool TagReader::get_timeval(Timeval& value) {
    return tag(kTimeval) && raw_u32(value.seconds) && raw_u32(value.microseconds);
}

bool TagReader::get_proplist(PropertyList& value) {
    if (!tag(kProplist)) {
        return false;
    }
    value.clear();
    for (;;) {
        std::optional<std::string> key;
        if (!get_string(key)) {
            return false;
        }
        if (!key) {
            return true;
        }
        uint32_t length = 0;
        std::vector<uint8_t> bytes;
        // The length is said twice; both must agree.
        if (!valid_key(*key) || value.size() >= kMaxProperties || !get_u32(length) ||
            length > kMaxPropertyBytes || !get_arbitrary(bytes, kMaxPropertyBytes) ||
            bytes.size() != length) {
            return fail();
        }
        value[*key] = std::move(bytes);
    }
}

bool TagReader::get_format_info(FormatInfo& value) {
    return tag(kFormatInfo) && get_u8(value.encoding) && get_proplist(value.properties);
}

void TagWriter::raw_u32(uint32_t value) {
    bytes_.insert(bytes_.end(),
                  {static_cast<uint8_t>(value >> 24), static_cast<uint8_t>(value >> 16),
                   static_cast<uint8_t>(value >> 8), static_cast<uint8_t>(value)});
}

void TagWriter::raw_u64(uint64_t value) {
    raw_u32(static_cast<uint32_t>(value >> 32));
    raw_u32(static_cast<uint32_t>(value));
}

TagWriter& TagWriter::put_u32(uint32_t value) {
    bytes_.push_back(kU32);
    raw_u32(value);
    return *this;
}

TagWriter& TagWriter::put_u8(uint8_t value) {
    bytes_.insert(bytes_.end(), {kU8, value});
    return *this;
}

TagWriter& TagWriter::put_u64(uint64_t value) {
    bytes_.push_back(kU64);
    raw_u64(value);
    return *this;
}

TagWriter& TagWriter::put_s64(int64_t value) {
    bytes_.push_back(kS64);
    raw_u64(static_cast<uint64_t>(value));
    return *this;
}

TagWriter& TagWriter::put_usec(uint64_t value) {
    bytes_.push_back(kUsec);
    raw_u64(value);
    return *this;
}

TagWriter& TagWriter::put_bool(bool value) {
    bytes_.push_back(value ? kTrue : kFalse);
    return *this;
}

TagWriter& TagWriter::put_string(const std::string& value) {
    bytes_.push_back(kString);
    // A NUL inside would end the string early for the reader: it is cut there.
    const size_t length = std::min(value.size(), std::strlen(value.c_str()));
    bytes_.insert(bytes_.end(), value.begin(), value.begin() + static_cast<std::ptrdiff_t>(length));
    bytes_.push_back(0);
    return *this;
}

TagWriter& TagWriter::put_null_string() {
    bytes_.push_back(kNullString);
    return *this;
}

TagWriter& TagWriter::put_optional_string(const std::optional<std::string>& value) {
    return value ? put_string(*value) : put_null_string();
}

TagWriter& TagWriter::put_arbitrary(std::span<const uint8_t> value) {
    bytes_.push_back(kArbitrary);
    raw_u32(static_cast<uint32_t>(value.size()));
    bytes_.insert(bytes_.end(), value.begin(), value.end());
    return *this;
}

TagWriter& TagWriter::put_sample_spec(const SampleSpec& value) {
    bytes_.insert(bytes_.end(), {kSampleSpec, value.format, value.channels});
    raw_u32(value.rate);
    return *this;
}

TagWriter& TagWriter::put_channel_map(const ChannelMap& value) {
    bytes_.insert(bytes_.end(), {kChannelMap, static_cast<uint8_t>(value.positions.size())});
    bytes_.insert(bytes_.end(), value.positions.begin(), value.positions.end());
    return *this;
}

TagWriter& TagWriter::put_channel_volumes(const ChannelVolumes& value) {
    bytes_.insert(bytes_.end(), {kChannelVolumes, static_cast<uint8_t>(value.values.size())});
    for (const uint32_t volume : value.values) {
        raw_u32(volume);
    }
    return *this;
}

TagWriter& TagWriter::put_volume(uint32_t value) {
    bytes_.push_back(kVolume);
    raw_u32(value);
    return *this;
}

TagWriter& TagWriter::put_timeval(const Timeval& value) {
    bytes_.push_back(kTimeval);
    raw_u32(value.seconds);
    raw_u32(value.microseconds);
    return *this;
}

TagWriter& TagWriter::put_proplist(const PropertyList& value) {
    bytes_.push_back(kProplist);
    for (const auto& [key, bytes] : value) {
        put_string(key);
        put_u32(static_cast<uint32_t>(bytes.size()));
        put_arbitrary(bytes);
    }
    return put_null_string();
}

TagWriter& TagWriter::put_format_info(const FormatInfo& value) {
    bytes_.push_back(kFormatInfo);
    put_u8(value.encoding);
    return put_proplist(value.properties);
}

std::optional<std::string> property_string(const PropertyList& properties, const std::string& key) {
    const auto it = properties.find(key);
    if (it == properties.end() || it->second.empty() || it->second.back() != 0) {
        return std::nullopt;
    }
    const std::vector<uint8_t>& bytes = it->second;
    if (std::find(bytes.begin(), bytes.end() - 1, 0) != bytes.end() - 1) {
        return std::nullopt;
    }
    return std::string(bytes.begin(), bytes.end() - 1);
}

void set_property(PropertyList& properties, const std::string& key, const std::string& value) {
    std::vector<uint8_t> bytes(value.begin(), value.end());
    bytes.push_back(0);
    properties[key] = std::move(bytes);
}

} // namespace audiod::pulse
