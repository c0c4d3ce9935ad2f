#include "common/json_writer.h"

#include <array>
#include <cassert>
#include <charconv>
#include <cmath>

namespace audiod {
namespace {

constexpr std::string_view kReplacement = "\xEF\xBF\xBD"; // U+FFFD

template <class T>
void append_number(std::string& out, T number) {
    std::array<char, 32> text;
    const auto result = std::to_chars(text.data(), text.data() + text.size(), number);
    out.append(text.data(), result.ptr);
}

// Length of the well-formed UTF-8 sequence starting at text[0] if there is
// one; otherwise, as a negative number, the length of its longest prefix
// that could have begun one (at least 1). Replacing each such maximal prefix
// with one U+FFFD is what Unicode recommends, and what browsers do.
int utf8_sequence(std::string_view text) noexcept {
    const auto lead = static_cast<uint8_t>(text[0]);
    int length = 0;
    uint8_t low = 0x80;
    uint8_t high = 0xBF;
    if (lead >= 0xC2 && lead <= 0xDF) {
        length = 2;
    } else if (lead >= 0xE0 && lead <= 0xEF) {
        length = 3;
        // No overlong forms, no UTF-16 surrogates.
        low = lead == 0xE0 ? 0xA0 : 0x80;
        high = lead == 0xED ? 0x9F : 0xBF;
    } else if (lead >= 0xF0 && lead <= 0xF4) {
        length = 4;
        // No overlong forms, nothing above U+10FFFF.
        low = lead == 0xF0 ? 0x90 : 0x80;
        high = lead == 0xF4 ? 0x8F : 0xBF;
    } else {
        return -1;
    }
    int valid = 1;
    while (valid < length && static_cast<size_t>(valid) < text.size()) {
        const auto next = static_cast<uint8_t>(text[static_cast<size_t>(valid)]);
        if (next < low || next > high) {
            break;
        }
        low = 0x80;
        high = 0xBF;
        ++valid;
    }
    return valid == length ? length : -valid;
}

} // namespace

void JsonWriter::append_quoted(std::string& out, std::string_view text) {
    static constexpr char kHex[] = "0123456789abcdef";
    out += '"';
    size_t i = 0;
    while (i < text.size()) {
        const auto c = static_cast<uint8_t>(text[i]);
        if (c >= 0x80) {
            const int length = utf8_sequence(text.substr(i));
            if (length > 0) {
                out.append(text.substr(i, static_cast<size_t>(length)));
                i += static_cast<size_t>(length);
            } else {
                out += kReplacement;
                i += static_cast<size_t>(-length);
            }
            continue;
        }
        if (c == '"' || c == '\\') {
            out += '\\';
            out += static_cast<char>(c);
        } else if (c < 0x20) {
            out += "\\u00";
            out += kHex[c >> 4];
            out += kHex[c & 0xF];
        } else {
            out += static_cast<char>(c);
        }
        ++i;
    }
    out += '"';
}

void JsonWriter::before_value() {
    if (levels_.empty()) {
        assert(out_.empty() && "a JSON document holds one top-level value");
        return;
    }
    Level& level = levels_.back();
    if (level.scope == Scope::object) {
        assert(after_key_ && "a value in an object needs a key first");
        after_key_ = false;
        return;
    }
    if (!level.empty) {
        out_ += ',';
    }
    level.empty = false;
}

void JsonWriter::begin(Scope scope, char open) {
    before_value();
    out_ += open;
    levels_.push_back(Level{scope});
}

void JsonWriter::end(Scope scope, char close) {
    assert(!levels_.empty() && levels_.back().scope == scope && !after_key_);
    (void)scope;
    levels_.pop_back();
    out_ += close;
}

void JsonWriter::begin_object() {
    begin(Scope::object, '{');
}
void JsonWriter::end_object() {
    end(Scope::object, '}');
}
void JsonWriter::begin_array() {
    begin(Scope::array, '[');
}
void JsonWriter::end_array() {
    end(Scope::array, ']');
}

void JsonWriter::key(std::string_view name) {
    assert(!levels_.empty() && levels_.back().scope == Scope::object && !after_key_);
    Level& level = levels_.back();
    if (!level.empty) {
        out_ += ',';
    }
    level.empty = false;
    append_quoted(out_, name);
    out_ += ':';
    after_key_ = true;
}

void JsonWriter::value(std::string_view text) {
    before_value();
    append_quoted(out_, text);
}

void JsonWriter::value(int64_t number) {
    before_value();
    append_number(out_, number);
}

void JsonWriter::value(uint64_t number) {
    before_value();
    append_number(out_, number);
}

void JsonWriter::value(double number) {
    before_value();
    if (std::isfinite(number)) {
        // Shortest text that reads back as the same double.
        append_number(out_, number);
    } else {
        out_ += "null";
    }
}

void JsonWriter::value(bool flag) {
    before_value();
    out_ += flag ? "true" : "false";
}

void JsonWriter::null() {
    before_value();
    out_ += "null";
}

} // namespace audiod
