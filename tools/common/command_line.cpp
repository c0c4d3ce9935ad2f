#include "command_line.h"

#include "cli.h"

#include <cstdio>
#include <cstdlib>
#include <getopt.h>
#include <vector>

namespace audiod::cli {

namespace {

constexpr int kVersion = 999; // --version without -V

} // namespace

int parse_command_line(int argc, char** argv, const Tool& tool, std::span<const Option> options,
                       const std::function<void(int code, const char* argument)>& handle) {
    const int version = tool.short_version ? 'V' : kVersion;
    std::vector<option> long_options;
    // '+': stop at the first operand, so that "-6dB" after a command is
    // one of its arguments.
    std::string short_options = tool.options_first ? "+" : "";
    for (const Option& o : options) {
        long_options.push_back({o.name, o.argument, nullptr, o.code});
        if (o.code < 256) {
            short_options += static_cast<char>(o.code);
            short_options += o.argument == required_argument   ? ":"
                             : o.argument == optional_argument ? "::"
                                                               : "";
        }
    }
    long_options.push_back({"help", no_argument, nullptr, 'h'});
    long_options.push_back({"version", no_argument, nullptr, version});
    long_options.push_back({nullptr, 0, nullptr, 0});
    short_options += tool.short_version ? "hV" : "h";
    for (;;) {
        const int c = getopt_long(argc, argv, short_options.c_str(), long_options.data(), nullptr);
        if (c == -1) {
            return optind;
        }
        if (c == 'h') {
            std::fputs(tool.usage, stdout);
            std::exit(0);
        }
        if (c == version) {
            std::printf("%s %s\n", tool.name, tool.version);
            std::exit(0);
        }
        if (c == '?' || c == ':') {
            std::fprintf(stderr, "Try '%s --help' for more information.\n", tool.name);
            std::exit(2);
        }
        handle(c, optarg);
    }
}

std::string only_operand(const Tool& tool, int argc, char** argv, int first, const char* missing) {
    if (first + 1 != argc) {
        usage_error(tool.name, first >= argc ? missing : "more than one FILE given");
    }
    return argv[first];
}

} // namespace audiod::cli
