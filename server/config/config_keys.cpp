#include "config/config_keys.h"

#include "audiod/audiod.h"

#include <array>
#include <cstdio>
#include <cstdlib>

namespace audiod {

namespace {

constexpr std::array kKeys = {
    ConfigKey{"server", "rate", "integer", "48000", AUDIOD_MIN_RATE, AUDIOD_MAX_RATE},
    ConfigKey{"server", "channels", "integer", "2", 1, AUDIOD_MAX_CHANNELS},
    ConfigKey{"server", "quantum", "integer", "256", 16, 8192},
    ConfigKey{"server", "default-sink", "string", "the first sink", 0, 0},
    ConfigKey{"server", "default-source", "string", "the default sink's monitor", 0, 0},
    ConfigKey{"server", "rt-priority", "integer", "20", 0, 99},
    ConfigKey{"server", "stall-timeout-ms", "integer", "1000", 50, 600000},
    ConfigKey{"server", "resample-quality", "integer", "5", 0, 10},
    ConfigKey{"server", "client-memory-mb", "integer", "64", 1, 4096},
    ConfigKey{"sinks.NAME", "type", "string", "none: required", 0, 0},
    // A device's own format: the [server] values unless it says otherwise.
    ConfigKey{"sinks.NAME", "quantum", "integer", "[server] quantum", 16, 8192},
    ConfigKey{"sinks.NAME", "rate", "integer", "[server] rate", AUDIOD_MIN_RATE, AUDIOD_MAX_RATE},
    ConfigKey{"sinks.NAME", "channels", "integer", "[server] channels", 1, AUDIOD_MAX_CHANNELS},
    ConfigKey{"sources.NAME", "type", "string", "none: required", 0, 0},
    ConfigKey{"sources.NAME", "quantum", "integer", "[server] quantum", 16, 8192},
    ConfigKey{"sources.NAME", "rate", "integer", "[server] rate", AUDIOD_MIN_RATE, AUDIOD_MAX_RATE},
    ConfigKey{"sources.NAME", "channels", "integer", "[server] channels", 1, AUDIOD_MAX_CHANNELS},
    ConfigKey{"sources.NAME", "sink", "string", "none: not relayed", 0, 0},
    ConfigKey{"sources.NAME", "play-latency-ms", "integer", "20", 1, 2000},
    ConfigKey{"groups.NAME", "link-offset-ms", "integer", "150", 20, 10000},
    ConfigKey{"groups.NAME", "local", "array", "none: no sink of this machine plays in step", 0, 0},
    ConfigKey{"groups.NAME", "local.delay-ms", "integer", "0", 0, 9980},
    ConfigKey{"apps.NAME", "volume", "level", "100%", 0, 0},
    ConfigKey{"apps.NAME", "mute", "boolean", "false", 0, 0},
    ConfigKey{"apps.NAME", "sink", "string", "the default sink", 0, 0},
    ConfigKey{"pulse", "enable", "boolean", "true for a user's server on its default socket", 0, 0},
    ConfigKey{"pulse", "socket", "string", "$XDG_RUNTIME_DIR/pulse/native", 0, 0},
    ConfigKey{"pulse", "shared-memory", "boolean", "true", 0, 0},
    ConfigKey{"pulse", "tcp", "string", "(none: no TCP listener)", 0, 0},
    ConfigKey{"pulse", "cookie", "string", "$XDG_CONFIG_HOME/pulse/cookie", 0, 0},
};

} // namespace

std::span<const ConfigKey> config_keys() {
    return kKeys;
}

const ConfigKey& config_key(std::string_view table, std::string_view key) {
    for (const ConfigKey& entry : kKeys) {
        if (entry.table == table && entry.key == key) {
            return entry;
        }
    }
    std::fprintf(stderr, "audiod: no configuration key %.*s in [%.*s]\n",
                 static_cast<int>(key.size()), key.data(), static_cast<int>(table.size()),
                 table.data());
    std::abort();
}

std::string known_keys(std::string_view table) {
    std::string out;
    for (const ConfigKey& entry : kKeys) {
        if (entry.table == table) {
            out += (out.empty() ? "" : ", ") + std::string(entry.key);
        }
    }
    return out;
}

} // namespace audiod
