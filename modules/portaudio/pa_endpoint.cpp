#include "pa_endpoint.h"

#include "device_options.h"

#include <cerrno>
#include <memory>

namespace audiod::portaudio {

PaEndpoint* open_endpoint(const audiod_host* host, const audiod_device_config& config, bool capture,
                          audiod_open_info* info, std::string* error, int* code) {
    const DeviceOptions options(config);
    const auto process = options.get("process");
    if (process && *process != "own" && *process != "server") {
        *error = "process = " + *process +
                 " is not \"own\" (a helper process) or \"server\" (the server's)";
        *code = -EINVAL;
        return nullptr;
    }
    auto endpoint = std::make_unique<PaEndpoint>();
    // With host-api = "jack" the server's PortAudio is not even started
    // (starting it opens a JACK client here too).
    const bool own = process ? *process == "own" : options.get("host-api") == "jack";
    if (!own) {
        endpoint->local =
            open_device(host, config, capture, info, error, code, process.has_value());
        if (endpoint->local != nullptr) {
            return endpoint.release();
        }
        if (*code != kOpenInHelper) {
            return nullptr;
        }
    }
    endpoint->remote = open_remote(host, config, capture, info, error, code);
    return endpoint->remote != nullptr ? endpoint.release() : nullptr;
}

void close_endpoint(PaEndpoint* endpoint) {
    if (endpoint->local != nullptr) {
        close_device(endpoint->local);
    }
    if (endpoint->remote != nullptr) {
        close_remote(endpoint->remote);
    }
    delete endpoint;
}

int start_endpoint(PaEndpoint& endpoint) {
    return endpoint.remote != nullptr ? start_remote(*endpoint.remote)
                                      : start_device(*endpoint.local);
}

int wait_endpoint(PaEndpoint& endpoint) {
    return endpoint.remote != nullptr ? wait_remote(*endpoint.remote)
                                      : wait_for_quantum(*endpoint.local);
}

uint64_t endpoint_xruns(const PaEndpoint& endpoint) {
    return endpoint.remote != nullptr ? remote_xruns(*endpoint.remote)
                                      : endpoint.local->xruns.load(std::memory_order_relaxed);
}

size_t describe_endpoint(const PaEndpoint& endpoint, char* text, size_t size) {
    return endpoint.remote != nullptr ? describe_remote(*endpoint.remote, text, size)
                                      : describe_device(*endpoint.local, text, size);
}

} // namespace audiod::portaudio
