// Command-line helpers shared by the tools: usage errors (exit status 2)
// and checked number arguments.
#pragma once

#include <cstdint>
#include <string>

namespace audiod::cli {

// Prints "PROGRAM: MESSAGE" to stderr and exits 1: the tool failed.
[[noreturn]] void fail(const char* program, const std::string& message);

// Prints "PROGRAM: MESSAGE" and the --help hint to stderr and exits 2.
[[noreturn]] void usage_error(const char* program, const std::string& message);

// An integer in [min, max], or a usage error naming `what`.
uint32_t parse_uint(const char* program, const char* text, const char* what, uint32_t min,
                    uint32_t max);

// A number in [min, max], or a usage error naming `what`.
double parse_double(const char* program, const char* text, const char* what, double min,
                    double max);

} // namespace audiod::cli
