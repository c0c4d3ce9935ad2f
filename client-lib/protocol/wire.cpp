#include "protocol/wire.h"

#include <bit>
#include <cstring>

namespace audiod::proto {

static_assert(std::endian::native == std::endian::little,
              "the wire and ring formats are little-endian; add byte swapping to port this");

void WireWriter::u32(uint32_t value) {
    const auto* p = reinterpret_cast<const uint8_t*>(&value);
    bytes_.insert(bytes_.end(), p, p + sizeof value);
}

void WireWriter::u64(uint64_t value) {
    const auto* p = reinterpret_cast<const uint8_t*>(&value);
    bytes_.insert(bytes_.end(), p, p + sizeof value);
}

void WireWriter::f32(float value) {
    u32(std::bit_cast<uint32_t>(value));
}

void WireWriter::str(const std::string& value) {
    // Writers are trusted (our own code), but keep them inside the limits the
    // reader enforces so that an over-long name fails here, not at the peer.
    const size_t length = value.size() > kMaxStringBytes ? kMaxStringBytes : value.size();
    u32(static_cast<uint32_t>(length));
    bytes_.insert(bytes_.end(), value.begin(), value.begin() + static_cast<ptrdiff_t>(length));
}

bool WireReader::take(void* out, size_t count) {
    if (!ok_ || remaining() < count) {
        ok_ = false;
        std::memset(out, 0, count);
        return false;
    }
    std::memcpy(out, bytes_.data() + offset_, count);
    offset_ += count;
    return true;
}

void WireReader::u8(uint8_t& value) {
    take(&value, sizeof value);
}
void WireReader::u32(uint32_t& value) {
    take(&value, sizeof value);
}
void WireReader::u64(uint64_t& value) {
    take(&value, sizeof value);
}

void WireReader::i32(int32_t& value) {
    uint32_t raw = 0;
    u32(raw);
    value = static_cast<int32_t>(raw);
}

void WireReader::f32(float& value) {
    uint32_t raw = 0;
    u32(raw);
    value = std::bit_cast<float>(raw);
}

void WireReader::boolean(bool& value) {
    uint8_t raw = 0;
    u8(raw);
    if (raw > 1) {
        fail();
    }
    value = raw == 1;
}

void WireReader::str(std::string& value) {
    uint32_t length = 0;
    u32(length);
    if (!ok_ || length > kMaxStringBytes || length > remaining()) {
        fail();
        value.clear();
        return;
    }
    value.assign(reinterpret_cast<const char*>(bytes_.data() + offset_), length);
    offset_ += length;
}

} // namespace audiod::proto
