// The alsa module: a sink and a source on ALSA PCMs (alsa_pcm.h), and the
// PCMs they can open (alsa_devices.cpp).
#include "alsa_pcm.h"
#include "module_ops.h"

namespace {

using audiod::alsa::AlsaPcm;
using audiod::alsa::kOptions;

constexpr audiod_module kModule = {
    AUDIOD_MODULE_ABI_VERSION, "alsa",
    "plays on and records from ALSA PCMs, driven by the device's clock",
    &audiod::sink_table<AlsaPcm, kOptions>, &audiod::source_table<AlsaPcm, kOptions>};

} // namespace

extern "C" __attribute__((visibility("default"))) const audiod_module* audiod_module_entry(void) {
    return &kModule;
}
