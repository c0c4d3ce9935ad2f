#include "cli.h"

#include <cerrno>
#include <cstdio>
#include <cstdlib>

namespace audiod::cli {

void fail(const char* program, const std::string& message) {
    std::fprintf(stderr, "%s: %s\n", program, message.c_str());
    std::exit(1);
}

void usage_error(const char* program, const std::string& message) {
    std::fprintf(stderr, "%s: %s\nTry '%s --help' for more information.\n", program,
                 message.c_str(), program);
    std::exit(2);
}

uint32_t parse_uint(const char* program, const char* text, const char* what, uint32_t min,
                    uint32_t max) {
    char* end = nullptr;
    errno = 0;
    const unsigned long value = std::strtoul(text, &end, 10);
    if (errno != 0 || end == text || *end != '\0' || text[0] == '-' || value < min || value > max) {
        usage_error(program, std::string("invalid ") + what + " '" + text + "' (" +
                                 std::to_string(min) + ".." + std::to_string(max) + ")");
    }
    return static_cast<uint32_t>(value);
}

double parse_double(const char* program, const char* text, const char* what, double min,
                    double max) {
    char* end = nullptr;
    errno = 0;
    const double value = std::strtod(text, &end);
    if (errno != 0 || end == text || *end != '\0' || !(value >= min && value <= max)) {
        usage_error(program, std::string("invalid ") + what + " '" + text + "'");
    }
    return value;
}

} // namespace audiod::cli
