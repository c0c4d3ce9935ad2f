#include "config/toml_guard.h"

namespace audiod {

namespace {

enum class Mode { plain, comment, basic, literal, multi_basic, multi_literal };

bool starts(std::string_view text, size_t i, std::string_view what) {
    return text.substr(i, what.size()) == what;
}

} // namespace

std::optional<TomlGuardError> check_toml_text(std::string_view text) {
    Mode mode = Mode::plain;
    unsigned line = 1;
    for (size_t i = 0; i < text.size(); ++i) {
        const auto c = static_cast<unsigned char>(text[i]);
        if (c == '\n') {
            ++line;
        }
        const bool ascii = c < 0x80;
        switch (mode) {
        case Mode::plain:
            if (!ascii) {
                return TomlGuardError{line, "non-ASCII character outside a string"};
            }
            if (c == '#') {
                mode = Mode::comment;
            } else if (starts(text, i, "\"\"\"")) {
                mode = Mode::multi_basic;
                i += 2;
            } else if (starts(text, i, "'''")) {
                mode = Mode::multi_literal;
                i += 2;
            } else if (c == '"') {
                mode = Mode::basic;
            } else if (c == '\'') {
                mode = Mode::literal;
            }
            break;
        case Mode::comment:
            if (c == '\n') {
                mode = Mode::plain;
            }
            break;
        case Mode::basic:
            if (c == '\\') {
                if (i + 1 < text.size() && static_cast<unsigned char>(text[i + 1]) >= 0x80) {
                    return TomlGuardError{line, "invalid escape sequence"};
                }
                if (i + 1 < text.size() && text[i + 1] == '\n') {
                    ++line;
                }
                ++i; // the escaped character cannot end the string
            } else if (c == '"' || c == '\n') {
                mode = Mode::plain; // a newline inside is toml++'s error to report
            }
            break;
        case Mode::literal:
            if (c == '\'' || c == '\n') {
                mode = Mode::plain;
            }
            break;
        case Mode::multi_basic:
            if (!ascii) {
                return TomlGuardError{line, "non-ASCII text in a multi-line string (use \"...\")"};
            }
            if (c == '\\') {
                if (i + 1 < text.size() && text[i + 1] == '\n') {
                    ++line;
                }
                ++i;
            } else if (starts(text, i, "\"\"\"")) {
                mode = Mode::plain;
                i += 2;
            }
            break;
        case Mode::multi_literal:
            if (starts(text, i, "'''")) {
                mode = Mode::plain;
                i += 2;
            }
            break;
        }
    }
    return std::nullopt;
}

} // namespace audiod
