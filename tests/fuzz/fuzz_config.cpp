// Fuzz target: configuration text. parse_config must return a configuration
// or a message, never crash or throw, and an accepted configuration must
// respect the documented limits.
#include "config/config.h"

#include <cstdint>
#include <string_view>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    const std::string_view text(reinterpret_cast<const char*>(data), size);
    const auto result = audiod::parse_config(text, "fuzz.conf");
    if (const auto* config = std::get_if<audiod::ServerConfig>(&result)) {
        if (config->rate < 8000 || config->rate > 192000 || config->channels < 1 ||
            config->channels > 8 || config->quantum < 16 || config->quantum > 8192 ||
            config->sinks.empty()) {
            __builtin_trap();
        }
    }
    return 0;
}
