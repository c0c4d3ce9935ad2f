// A portaudio sink's or source's device: a PortAudio stream in the server
// (pa_stream.h) or in a helper process (remote_device.h, which says which
// devices go where and why), behind one set of calls for the sink and the
// source.
#pragma once

#include "audiod/module.h"
#include "pa_stream.h"
#include "remote_device.h"

#include <string>

namespace audiod::portaudio {

struct PaEndpoint {
    PaDevice* local = nullptr;      // in the server, or
    RemoteDevice* remote = nullptr; // in a helper
};

// Opens the device the options name where `process` says (default: JACK's
// in a helper, the others here). Returns nullptr with a message in `error`
// and a negative errno in `code` if it cannot. Thread: control.
PaEndpoint* open_endpoint(const audiod_host* host, const audiod_device_config& config, bool capture,
                          audiod_open_info* info, std::string* error, int* code);
// Thread: control.
void close_endpoint(PaEndpoint* endpoint);

// Thread: rt.
int start_endpoint(PaEndpoint& endpoint);
// Thread: rt.
int wait_endpoint(PaEndpoint& endpoint);

uint64_t endpoint_xruns(const PaEndpoint& endpoint);
size_t describe_endpoint(const PaEndpoint& endpoint, char* text, size_t size);

} // namespace audiod::portaudio
