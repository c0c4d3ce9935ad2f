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
    for (const std::string& app : store->names()) {
        const audiod::AppSettings settings = store->get(app);
        if (!std::isfinite(settings.volume) || settings.volume < 0 || settings.volume > 4 ||
            store->last_seen(app) < 0) {
            __builtin_trap();
        }
    }
    const auto again = audiod::AppStateStore::parse(store->serialize(), &error);
    if (!again || again->names() != store->names() ||
        again->default_sink() != store->default_sink()) {
        __builtin_trap();
    }
    for (const std::string& app : store->names()) {
        if (again->last_seen(app) != store->last_seen(app) ||
            again->remembered(app) != store->remembered(app)) {
            __builtin_trap();
        }
    }
    return 0;
}
