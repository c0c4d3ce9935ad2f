// The portaudio module: a sink and a source on any device PortAudio
// reaches (pa_endpoint.h), and the devices they can open.
#include "device_options.h"
#include "module_ops.h"
#include "pa_endpoint.h"
#include "pa_host.h"

#include <cerrno>
#include <cmath>
#include <mutex>

namespace {

using audiod::portaudio::kOptions;
using audiod::portaudio::PaEndpoint;

constexpr audiod_module kModule = audiod::make_module<PaEndpoint, kOptions>(
    "portaudio",
    "plays on and records from devices PortAudio reaches (ALSA, JACK, OSS), driven by the "
    "device's clock");

} // namespace

extern "C" __attribute__((visibility("default"))) const audiod_module* audiod_module_entry(void) {
    return &kModule;
}

// Every device of every host API, with what PortAudio says of it: its
// channels each way, its default rate and its default low latencies.
extern "C" __attribute__((visibility("default"))) int
audiod_module_devices(audiod_device_fn emit, void* context, char* error, size_t error_size) {
    using namespace audiod::portaudio;
    const std::lock_guard setup(setup_mutex());
    const PaLibrary library;
    if (!library.ok()) {
        audiod::set_error(error, error_size,
                          "cannot start PortAudio: " + error_text(library.error()));
        return -EIO;
    }
    for (PaDeviceIndex i = 0; i < Pa_GetDeviceCount(); ++i) {
        const PaDeviceInfo* device = Pa_GetDeviceInfo(i);
        if (device == nullptr || device->name == nullptr) {
            continue;
        }
        const std::string api = api_name(device->hostApi);
        audiod_device_info info{};
        info.api = api.c_str();
        info.name = device->name;
        info.description = "";
        info.index = i;
        info.playback = device->maxOutputChannels > 0;
        info.capture = device->maxInputChannels > 0;
        info.playback_channels = static_cast<uint32_t>(std::max(0, device->maxOutputChannels));
        info.capture_channels = static_cast<uint32_t>(std::max(0, device->maxInputChannels));
        info.default_rate = static_cast<uint32_t>(std::lround(device->defaultSampleRate));
        info.playback_latency_ms = info.playback ? device->defaultLowOutputLatency * 1000 : 0;
        info.capture_latency_ms = info.capture ? device->defaultLowInputLatency * 1000 : 0;
        emit(context, &info);
    }
    return 0;
}
