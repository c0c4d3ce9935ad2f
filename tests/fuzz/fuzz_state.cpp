// Fuzz target: the per-application state file, which the server reads at
// start-up from disk where anything may have happened to it. parse() must
// return a store or an error, never crash; an accepted store must hold only
// sane volumes and must survive its own round trip.
#include "engine/app_state.h"

#include <cmath>
#include <cstdint>
#include <string>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    const std::string text(reinterpret_cast<const char*>(data), size);
    std::string error;
    const auto store = audiod::AppStateStore::parse(text, &error);
    if (!store) {
        return 0;
    }
    for (const auto& [app, settings] : store->all()) {
        if (!std::isfinite(settings.volume) || settings.volume < 0 || settings.volume > 4) {
            __builtin_trap();
        }
    }
    const auto again = audiod::AppStateStore::parse(store->serialize(), &error);
    if (!again || again->all().size() != store->all().size() ||
        again->default_sink() != store->default_sink()) {
        __builtin_trap();
    }
    return 0;
}
