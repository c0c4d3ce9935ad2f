// The jack module: a sink and a source in a JACK graph (jack_device.h), and
// the JACK clients they can connect to.
#include "jack_device.h"
#include "jack_link.h"
#include "module_ops.h"

#include <jack/jack.h>

#include <cstdlib>
#include <map>
#include <string>

namespace {

using audiod::jack::JackDevice;
using audiod::jack::kOptions;

constexpr audiod_module kModule = audiod::make_module<JackDevice, kOptions>(
    "jack", "plays into and records from a JACK graph, driven by JACK's clock");

struct PortCounts {
    uint32_t inputs = 0;  // ports a sink can play into
    uint32_t outputs = 0; // ports a source can record from
    bool physical = false;
};

} // namespace

extern "C" __attribute__((visibility("default"))) const audiod_module* audiod_module_entry(void) {
    return &kModule;
}

// The clients of the running JACK server, which is what `connect` names:
// how many ports each offers a sink (inputs) and a source (outputs), at the
// server's rate and period. No JACK server running lists nothing.
extern "C" __attribute__((visibility("default"))) int
audiod_module_devices(audiod_device_fn emit, void* context, char*, size_t) {
    audiod::jack::silence_libjack();
    jack_status_t status{};
    jack_client_t* client = jack_client_open("audiod-list", JackNoStartServer, &status);
    if (client == nullptr) {
        return 0;
    }
    const std::string self = jack_get_client_name(client);
    std::map<std::string, PortCounts> clients;
    if (const char** ports = jack_get_ports(client, nullptr, JACK_DEFAULT_AUDIO_TYPE, 0)) {
        for (const char** p = ports; *p != nullptr; ++p) {
            const std::string name(*p);
            const std::string owner = name.substr(0, name.find(':'));
            if (owner == self) {
                continue;
            }
            // (A port gone since the listing has no flags to count.)
            const jack_port_t* port = jack_port_by_name(client, *p);
            if (port == nullptr) {
                continue;
            }
            PortCounts& counts = clients[owner];
            const int flags = jack_port_flags(port);
            counts.inputs += (flags & JackPortIsInput) != 0 ? 1 : 0;
            counts.outputs += (flags & JackPortIsOutput) != 0 ? 1 : 0;
            counts.physical = counts.physical || (flags & JackPortIsPhysical) != 0;
        }
        jack_free(ports);
    }
    const double period_ms = jack_get_buffer_size(client) * 1000.0 / jack_get_sample_rate(client);
    const uint32_t rate = jack_get_sample_rate(client);
    const char* server = std::getenv("JACK_DEFAULT_SERVER");
    const std::string description = std::string("JACK server '") +
                                    (server != nullptr && server[0] != '\0' ? server : "default") +
                                    "'";
    for (const auto& [name, counts] : clients) {
        const std::string text = description + (counts.physical ? ", physical ports" : "");
        audiod_device_info info{};
        info.api = "jack";
        info.name = name.c_str();
        info.description = text.c_str();
        info.index = -1;
        info.playback = counts.inputs > 0;
        info.capture = counts.outputs > 0;
        info.playback_channels = counts.inputs;
        info.capture_channels = counts.outputs;
        info.default_rate = rate;
        info.playback_latency_ms = info.playback ? period_ms : 0;
        info.capture_latency_ms = info.capture ? period_ms : 0;
        emit(context, &info);
    }
    jack_client_close(client);
    return 0;
}
