// The rtp module: network audio over RTP (RFC 3550) — a sink that sends
// (rtp_sink.cpp) and a source that receives (rtp_source.cpp).
#include "audiod/module.h"
#include "rtp_sink.h"
#include "rtp_source.h"

namespace {

const audiod_module kModule = {AUDIOD_MODULE_ABI_VERSION, "rtp",
                               "RTP network audio: Opus, L16, L24; SDP and SAP",
                               audiod::rtp::sink_ops(), audiod::rtp::source_ops()};

} // namespace

extern "C" __attribute__((visibility("default"))) const audiod_module* audiod_module_entry(void) {
    return &kModule;
}
