// A small streaming JSON writer for command-line output ("--json").
//
// Calls are made in document order and the writer places the commas and
// colons. The output is compact (no whitespace) and always valid JSON, even
// when the strings come from hostile clients: quotes, backslashes and control
// characters are escaped (controls as \u00XX), and bytes that are not valid
// UTF-8 become U+FFFD, one per maximal invalid sequence. Finite doubles are
// printed in the shortest form that reads back to the same value; NaN and
// infinities, which JSON cannot express, are written as null.
//
// The caller must produce a well-formed document: a key() before each value
// inside an object, none inside an array, begin/end calls balanced. Breaking
// that is a programming error, checked by assert() in debug builds.
//
// Threads: any; one writer is used by one thread at a time.
#pragma once

#include <concepts>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace audiod {

class JsonWriter {
public:
    void begin_object();
    void end_object();
    void begin_array();
    void end_array();

    // The name of the next member of the current object.
    void key(std::string_view name);

    void value(std::string_view text);
    // Without it, a string literal would pick value(bool).
    void value(const char* text) { value(std::string_view(text)); }
    void value(int64_t number);
    void value(uint64_t number);
    void value(double number);
    void value(bool flag);
    // Other integer types (int, unsigned, size_t ...), which would otherwise
    // be ambiguous between the overloads above.
    template <std::integral T>
    requires(!std::same_as<T, bool> && !std::same_as<T, char>) void value(T number) {
        if constexpr (std::signed_integral<T>) {
            value(static_cast<int64_t>(number));
        } else {
            value(static_cast<uint64_t>(number));
        }
    }
    void null();

    // The document so far.
    [[nodiscard]] const std::string& str() const noexcept { return out_; }

    // Appends `text` to `out` as a quoted JSON string (exposed for callers
    // that build JSON fragments by hand, and for tests).
    static void append_quoted(std::string& out, std::string_view text);

private:
    enum class Scope : uint8_t { object, array };
    struct Level {
        Scope scope;
        bool empty = true;
    };

    // Places the comma before a value (or a key) and checks where it may go.
    void before_value();
    void begin(Scope scope, char open);
    void end(Scope scope, char close);

    std::string out_;
    std::vector<Level> levels_;
    bool after_key_ = false;
};

} // namespace audiod
