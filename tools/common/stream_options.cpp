#include "stream_options.h"

#include "cli.h"
#include "realtime.h"

#include <getopt.h>

namespace audiod::cli {

const Option kStreamOptions[4] = {
    {"app", required_argument, 'a'},
    {"latency-ms", required_argument, 'l'},
    {"realtime", optional_argument, 'r'},
    {"quiet", no_argument, 'q'},
};

bool take_stream_option(const Tool& tool, int code, const char* argument, StreamOptions& options) {
    switch (code) {
    case 'a':
        options.app = argument;
        return true;
    case 'l':
        options.latency_ms = parse_uint(tool.name, argument, "latency", 1, AUDIOD_MAX_LATENCY_MS);
        return true;
    case 'r':
        options.realtime = parse_realtime_priority(tool.name, argument);
        return true;
    case 'q':
        options.quiet = true;
        return true;
    default:
        return false;
    }
}

audiod_stream_params stream_params(int format, uint32_t rate, uint32_t channels,
                                   const StreamOptions& options, const std::string& device) {
    audiod_stream_params params;
    audiod_stream_params_init(&params);
    params.format = format;
    params.rate = rate;
    params.channels = channels;
    params.latency_ms = options.latency_ms;
    params.sink = device.empty() ? nullptr : device.c_str();
    return params;
}

} // namespace audiod::cli
