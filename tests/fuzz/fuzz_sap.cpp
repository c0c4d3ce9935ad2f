// Fuzz target: SAP announcements and the session descriptions inside them,
// which anyone on the network may send. An accepted description must be one
// audiod can play, and must survive being written and read again.
#include "sap.h"
#include "sdp.h"

#include <cstdint>
#include <span>
#include <string>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    using namespace audiod::rtp;
    const char* why = nullptr;
    std::string_view text(reinterpret_cast<const char*>(data), size);
    if (const auto sap = parse_sap(std::span<const uint8_t>(data, size), why)) {
        text = sap->sdp;
    }
    std::string error;
    const auto sdp = parse_sdp(text, error);
    if (!sdp) {
        return 0;
    }
    if (sdp->port == 0 || sdp->channels == 0 || sdp->channels > 8 || sdp->address.empty()) {
        __builtin_trap();
    }
    const auto again = parse_sdp(write_sdp(*sdp), error);
    if (!again || again->port != sdp->port || again->encoding != sdp->encoding ||
        again->rate != sdp->rate || again->payload_type != sdp->payload_type) {
        __builtin_trap();
    }
    return 0;
}
