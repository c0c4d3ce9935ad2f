#include "protocol/messages.h"

#include <cstring>

namespace audiod::proto {

std::optional<Envelope> parse_envelope(std::span<const uint8_t> packet) noexcept {
    if (packet.size() < kEnvelopeBytes) {
        return std::nullopt;
    }
    uint32_t type = 0;
    uint32_t seq = 0;
    std::memcpy(&type, packet.data(), sizeof type);
    std::memcpy(&seq, packet.data() + 4, sizeof seq);
    return Envelope{static_cast<MsgType>(type), seq, packet.subspan(kEnvelopeBytes)};
}

} // namespace audiod::proto
