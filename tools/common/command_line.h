// A tool's command line, parsed the one way every audiod tool parses it
// (getopt_long): --help prints the tool's usage and exits 0, --version
// its version and exits 0, an unknown option or a missing argument the
// --help hint and exits 2, and each of the tool's own options is handed to
// it.
#pragma once

#include <functional>
#include <span>
#include <string>

namespace audiod::cli {

// One of a tool's options: its long name, whether it takes an argument
// (getopt's no_argument, required_argument, optional_argument), and its
// short letter, or a code from 1000 up for one that has none.
struct Option {
    const char* name;
    int argument;
    int code;
};

// What a tool says about itself.
struct Tool {
    const char* name;    // "audioplay": its messages start with it
    const char* usage;   // what --help prints
    const char* version; // what --version prints after the name
    bool short_version;  // -V is --version too
    bool options_first;  // options end at the first operand (a command)
};

// Parses argv: the common options as above, each of `options` to
// handle(code, argument) (argument: NULL when an optional one is absent).
// Returns the index of the first operand.
int parse_command_line(int argc, char** argv, const Tool& tool, std::span<const Option> options,
                       const std::function<void(int code, const char* argument)>& handle);

// The one operand a tool takes (a FILE): argv[first], or a usage error
// that says `missing` when there is none, or that there are more.
std::string only_operand(const Tool& tool, int argc, char** argv, int first, const char* missing);

} // namespace audiod::cli
