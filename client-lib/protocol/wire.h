// Binary encoding of control messages: little-endian fixed-width integers,
// IEEE floats, length-prefixed strings and counted lists.
//
// Every message type describes its fields once, in a `visit(V&, M&)`
// function (messages.h); WireWriter encodes with it and WireReader decodes
// with it, so the two directions cannot drift apart. WireReader is for
// hostile input: every read is bounds-checked, strings and lists have hard
// limits, and the first failure makes the reader fail for good (so decode
// functions need no error plumbing between fields).
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

namespace audiod::proto {

inline constexpr size_t kMaxMessageBytes = 128 * 1024;
inline constexpr uint32_t kMaxStringBytes = 1024;
inline constexpr uint32_t kMaxListItems = 1024;

class WireWriter {
public:
    void u8(uint8_t value) { bytes_.push_back(value); }
    void u32(uint32_t value);
    void u64(uint64_t value);
    void i32(int32_t value) { u32(static_cast<uint32_t>(value)); }
    void f32(float value);
    void boolean(bool value) { u8(value ? 1 : 0); }
    void str(const std::string& value);

    template <class T, class Visit>
    void list(const std::vector<T>& items, Visit&& visit_item) {
        u32(static_cast<uint32_t>(items.size()));
        for (const T& item : items) {
            visit_item(*this, item);
        }
    }

    // Named fields, as messages.h describes them: the name is for readers of
    // the message (audioctl's JSON); the wire carries only the value.
    void u32(const char*, uint32_t value) { u32(value); }
    void u64(const char*, uint64_t value) { u64(value); }
    void i32(const char*, int32_t value) { i32(value); }
    void f32(const char*, float value) { f32(value); }
    void boolean(const char*, bool value) { boolean(value); }
    void str(const char*, const std::string& value) { str(value); }
    void details(const char*, const std::string& value) { str(value); }
    void sample_format(const char*, uint32_t value) { u32(value); }
    void direction(const char*, uint32_t value) { u32(value); }
    void u32_or_none(const char*, uint32_t value) { u32(value); }
    template <class T, class Visit>
    void list(const char*, const std::vector<T>& items, Visit&& visit_item) {
        list(items, visit_item);
    }
    // A nested message (a list item): its fields, in place.
    template <class M>
    void object(const M& message) {
        visit(*this, message);
    }

    [[nodiscard]] const std::vector<uint8_t>& bytes() const noexcept { return bytes_; }
    [[nodiscard]] std::vector<uint8_t> take() noexcept { return std::move(bytes_); }

private:
    std::vector<uint8_t> bytes_;
};

class WireReader {
public:
    explicit WireReader(std::span<const uint8_t> bytes) noexcept
        : bytes_(bytes) {}

    void u8(uint8_t& value);
    void u32(uint32_t& value);
    void u64(uint64_t& value);
    void i32(int32_t& value);
    void f32(float& value);
    void boolean(bool& value);
    void str(std::string& value);

    template <class T, class Visit>
    void list(std::vector<T>& items, Visit&& visit_item) {
        uint32_t count = 0;
        u32(count);
        // Each item takes at least one byte, so a count larger than what is
        // left is a lie: refuse it before reserving anything.
        if (!ok_ || count > kMaxListItems || count > remaining()) {
            fail();
            return;
        }
        items.clear();
        items.resize(count);
        for (T& item : items) {
            visit_item(*this, item);
            if (!ok_) {
                return;
            }
        }
    }

    // Named fields (see WireWriter).
    void u32(const char*, uint32_t& value) { u32(value); }
    void u64(const char*, uint64_t& value) { u64(value); }
    void i32(const char*, int32_t& value) { i32(value); }
    void f32(const char*, float& value) { f32(value); }
    void boolean(const char*, bool& value) { boolean(value); }
    void str(const char*, std::string& value) { str(value); }
    void details(const char*, std::string& value) { str(value); }
    void sample_format(const char*, uint32_t& value) { u32(value); }
    void direction(const char*, uint32_t& value) { u32(value); }
    void u32_or_none(const char*, uint32_t& value) { u32(value); }
    template <class T, class Visit>
    void list(const char*, std::vector<T>& items, Visit&& visit_item) {
        list(items, visit_item);
    }
    template <class M>
    void object(M& message) {
        visit(*this, message);
    }

    [[nodiscard]] bool ok() const noexcept { return ok_; }
    // True when everything decoded and nothing is left over.
    [[nodiscard]] bool finished() const noexcept { return ok_ && offset_ == bytes_.size(); }
    [[nodiscard]] size_t remaining() const noexcept { return bytes_.size() - offset_; }
    void fail() noexcept { ok_ = false; }

private:
    bool take(void* out, size_t count);

    std::span<const uint8_t> bytes_;
    size_t offset_ = 0;
    bool ok_ = true;
};

} // namespace audiod::proto
