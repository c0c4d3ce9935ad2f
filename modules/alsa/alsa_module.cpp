#include "alsa_module.h"

namespace {

const audiod_module kModule = {AUDIOD_MODULE_ABI_VERSION, "alsa",
                               "plays on and records from ALSA PCMs, driven by the device's clock",
                               audiod::alsa::sink_ops(), audiod::alsa::source_ops()};

} // namespace

extern "C" __attribute__((visibility("default"))) const audiod_module* audiod_module_entry(void) {
    return &kModule;
}
