// The alsa module: a sink and a source on ALSA PCMs (alsa_pcm.h), and the
// PCMs they can open (alsa_devices.cpp).
#include "alsa_pcm.h"
#include "module_ops.h"

namespace {

using audiod::alsa::AlsaPcm;
using audiod::alsa::kOptions;

constexpr audiod_module kModule = audiod::make_module<AlsaPcm, kOptions>(
    "alsa", "plays on and records from ALSA PCMs, driven by the device's clock");

} // namespace

extern "C" __attribute__((visibility("default"))) const audiod_module* audiod_module_entry(void) {
    return &kModule;
}
