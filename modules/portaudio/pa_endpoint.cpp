#include "pa_endpoint.h"

#include "device_options.h"
#include "recovery_escape.h"

#include <cerrno>
#include <cstring>

namespace audiod::portaudio {

namespace {

// One blocking transfer on a stream in the server: `call`, marked as
// under way (in_call: close_device leaves a JACK stream given up inside
// one open). The xrun PortAudio reports as `xrun` is counted; any other
// error fails the device. Thread: rt.
template <class Call>
int transfer_rt(PaDevice& device, PaError xrun, Call call) noexcept {
    if (const int gone = check_present(device); gone != 0) {
        return gone;
    }
    device.in_call.store(true, std::memory_order_relaxed);
    const PaError err = call(device.stream);
    device.in_call.store(false, std::memory_order_relaxed);
    if (err == xrun) {
        device.xruns.fetch_add(1, std::memory_order_relaxed);
        return 0;
    }
    return err == paNoError ? 0 : failing(device, error_code(err));
}

} // namespace

std::unique_ptr<PaEndpoint> PaEndpoint::open(const OpenRequest& request, audiod_open_info* info,
                                             std::string* error, int* code) {
    const auto& [host, config, capture] = request;
    const DeviceOptions options(config);
    const auto process = options.get("process");
    if (process && *process != "own" && *process != "server") {
        return refuse(error, code,
                      "process = " + *process +
                          " is not \"own\" (a helper process) or \"server\" (the server's)",
                      -EINVAL);
    }
    auto endpoint = std::make_unique<PaEndpoint>();
    // With host-api = "jack" the server's PortAudio is not even started
    // (starting it opens a JACK client here too).
    const bool own = process ? *process == "own" : options.get("host-api") == "jack";
    if (!own) {
        endpoint->local_ =
            open_device(host, config, capture, info, error, code, process.has_value());
        if (endpoint->local_ != nullptr) {
            return endpoint;
        }
        if (*code != kOpenInHelper) {
            return nullptr;
        }
    }
    endpoint->remote_ = open_remote(host, config, capture, info, error, code);
    return endpoint->remote_ != nullptr ? std::move(endpoint) : nullptr;
}

PaEndpoint::~PaEndpoint() {
    if (local_ != nullptr) {
        close_device(local_);
    }
    if (remote_ != nullptr) {
        close_remote(remote_);
    }
}

int PaEndpoint::start_rt() noexcept {
    return remote_ != nullptr ? start_remote(*remote_) : start_device(*local_);
}

int PaEndpoint::wait_rt() noexcept {
    return remote_ != nullptr ? wait_remote(*remote_) : wait_for_quantum(*local_);
}

int PaEndpoint::write_rt(const void* frames, uint32_t count) noexcept {
    if (remote_ != nullptr) {
        return write_remote(*remote_, frames, count);
    }
    return transfer_rt(*local_, paOutputUnderflowed,
                       [&](PaStream* stream) { return write_stream(stream, frames, count); });
}

int PaEndpoint::read_rt(void* frames, uint32_t count) noexcept {
    if (remote_ != nullptr) {
        return read_remote(*remote_, frames, count);
    }
    const int rc = transfer_rt(*local_, paInputOverflowed, [&](PaStream* stream) {
        return read_stream(stream, frames, count);
    });
    if (rc != 0) {
        std::memset(frames, 0, size_t{count} * local_->frame_bytes);
    }
    return rc;
}

uint64_t PaEndpoint::xruns() const noexcept {
    return remote_ != nullptr ? remote_xruns(*remote_)
                              : local_->xruns.load(std::memory_order_relaxed);
}

size_t PaEndpoint::describe(char* text, size_t size) const {
    return remote_ != nullptr ? describe_remote(*remote_, text, size)
                              : describe_device(*local_, text, size);
}

} // namespace audiod::portaudio
