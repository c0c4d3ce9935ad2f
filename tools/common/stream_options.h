// The options audioplay and audiorec share (an application name, a
// buffer, real-time scheduling, quiet) and the stream they ask for.
#pragma once

#include "audiod/audiod.h"
#include "command_line.h"

#include <cstdint>
#include <optional>
#include <string>
#include <utility>

namespace audiod::cli {

// The options a stream tool shares: how it names itself to the server, how
// much it buffers, whether its audio thread is real-time, and whether it
// says what it does.
struct StreamOptions {
    // The tool's defaults.
    StreamOptions(std::string default_app, uint32_t default_latency_ms)
        : app(std::move(default_app))
        , latency_ms(default_latency_ms) {}

    std::string app;
    uint32_t latency_ms;
    std::optional<int> realtime; // --realtime: the priority, 0 = the default
    bool quiet = false;
};

// -a/--app NAME, -l/--latency-ms N, -r/--realtime[=PRIO], -q/--quiet.
extern const Option kStreamOptions[4];

// Takes one of kStreamOptions into `options` (true), or leaves a code that
// is not one of them to the tool (false).
bool take_stream_option(const Tool& tool, int code, const char* argument, StreamOptions& options);

// The parameters of a stream of this format, buffered as `options` say,
// on `device` (a sink, or a source to record from; "" for the default).
// The strings it points to are `options`' and `device`'s.
audiod_stream_params stream_params(int format, uint32_t rate, uint32_t channels,
                                   const StreamOptions& options, const std::string& device);

} // namespace audiod::cli
