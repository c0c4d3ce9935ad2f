// The jack source: records from a JACK graph, driven by JACK's clock;
// record streams take what it captures.
//
//   [sources.studio-in]
//   type = "jack"
//   connect = "physical"     # the graph's physical capture ports (default);
//                            # "none"; a client's name, whose output ports
//                            # feed in_1 … in_N in order; or a regular
//                            # expression on port names
//   server, client-name      # as for the sink (jack_sink.cpp)
//
// JACK's callback puts each period into the ring; `wait` sleeps until a
// quantum is there and `read` takes it. A period the ring has no room for
// (the source's thread fell behind by the ring's length) is dropped and
// counted as an xrun.
#include "audiod/audiod.h"
#include "device_options.h"
#include "jack_link.h"
#include "jack_module.h"

namespace audiod::jack {

namespace {

int source_open(const audiod_host* host, const audiod_device_config* config, void** instance,
                audiod_open_info* info, char* error, size_t error_size) {
    std::string why;
    int code = 0;
    std::unique_ptr<JackLink> opened = JackLink::open(host, *config, true, &why, &code);
    if (!opened) {
        set_error(error, error_size, why);
        return code;
    }
    info->format = AUDIOD_FORMAT_F32LE;
    info->latency_frames = opened->latency_frames();
    *instance = opened.release();
    return 0;
}

int source_start(void* instance) {
    link_of(instance).start();
    return 0;
}

int source_wait(void* instance) {
    return link_of(instance).wait_for_quantum();
}

int source_read(void* instance, void* frames, uint32_t) {
    link_of(instance).read(static_cast<float*>(frames));
    return 0;
}

void source_stop(void* instance) {
    link_of(instance).stop();
}

void source_close(void* instance) {
    close_link(std::unique_ptr<JackLink>(static_cast<JackLink*>(instance)));
}

uint64_t source_xruns(void* instance) {
    return link_of(instance).xruns();
}

size_t source_describe(void* instance, char* text, size_t size) {
    return link_of(instance).describe(text, size);
}

constexpr audiod_source_ops kSourceOps = {
    source_open,  source_start, source_wait,     source_read, source_stop,
    source_close, source_xruns, source_describe, kOptions,    std::size(kOptions)};

} // namespace

const audiod_source_ops* source_ops() {
    return &kSourceOps;
}

} // namespace audiod::jack
