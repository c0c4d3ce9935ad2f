// The jack sink and the jack source: JACK clients of their own that play
// the mix into a JACK graph or record from it, driven by JACK's clock
// (module_ops.h makes their tables from this class).
//
//   [sinks.studio]                 [sources.studio-in]
//   type = "jack"                  type = "jack"
//   connect = "physical"           connect = "synth"   # kOptions: every option
//
// The device's rate must be JACK's. A sink's ports are out_1 … out_N, a
// source's in_1 … in_N, the i-th connected to the i-th port `connect`
// names. JACK's callback moves each period between the ports and a ring
// (jack_link.h); `wait` sleeps until a quantum fits or has arrived, and
// `write` or `read` moves it. A source's period the ring has no room for
// (its thread fell behind by the ring's length) is dropped and counted as
// an xrun.
//
// Why a module of its own beside PortAudio's JACK host API: libjack closes
// a client whose server died and tells it so, and a new client joins a
// restarted server, so this device fails when jackd goes and comes back
// with it; PortAudio's JACK stream can neither be stopped nor closed once
// its server is gone (see jack_link.h).
#pragma once

#include "audiod/audiod.h"
#include "audiod/module.h"
#include "jack_link.h"
#include "module_ops.h"

#include <memory>
#include <string>

namespace audiod::jack {

class JackDevice {
public:
    // Joins the JACK graph (JackLink::open says how). Thread: control.
    static std::unique_ptr<JackDevice> open(const OpenRequest& request, audiod_open_info* info,
                                            std::string* error, int* code) {
        std::unique_ptr<JackLink> link =
            JackLink::open(request.host, request.config, request.capture, error, code);
        if (link == nullptr) {
            return nullptr;
        }
        info->format = AUDIOD_FORMAT_F32LE;
        info->latency_frames = link->latency_frames();
        return std::make_unique<JackDevice>(std::move(link));
    }
    explicit JackDevice(std::unique_ptr<JackLink> link) noexcept
        : link_(std::move(link)) {}
    // Leaves the graph within a bound (close_link): libjack may wait on a
    // stopped server. Thread: control.
    ~JackDevice() { close_link(std::move(link_)); }
    JackDevice(const JackDevice&) = delete;
    JackDevice& operator=(const JackDevice&) = delete;

    // Thread: rt.
    int start_rt() noexcept {
        link_->start();
        return 0;
    }
    int wait_rt() noexcept { return link_->wait_for_quantum(); }
    int write_rt(const void* frames, uint32_t) noexcept {
        link_->write(static_cast<const float*>(frames));
        return 0;
    }
    int read_rt(void* frames, uint32_t) noexcept {
        link_->read(static_cast<float*>(frames));
        return 0;
    }
    void stop_rt() noexcept { link_->stop(); }

    // Thread: any.
    [[nodiscard]] uint64_t xruns() const noexcept { return link_->xruns(); }
    // Thread: any but rt.
    size_t describe(char* text, size_t size) const noexcept { return link_->describe(text, size); }

private:
    std::unique_ptr<JackLink> link_;
};

} // namespace audiod::jack
