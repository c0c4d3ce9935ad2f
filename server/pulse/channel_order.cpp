#include "pulse/channel_order.h"

#include "pulse/server_facts.h"

#include <algorithm>
#include <cstring>

namespace audiod::pulse {

std::optional<std::vector<uint8_t>> standard_order_of(const ChannelMap& map) {
    const ChannelMap standard = standard_channel_map(static_cast<uint32_t>(map.positions.size()));
    if (map.positions.empty() || standard.positions.size() != map.positions.size() ||
        map.positions == standard.positions) {
        return std::nullopt;
    }
    std::vector<uint8_t> order;
    order.reserve(map.positions.size());
    for (const uint8_t position : standard.positions) {
        const auto at = std::find(map.positions.begin(), map.positions.end(), position);
        if (at == map.positions.end()) {
            return std::nullopt; // a position the standard order has not
        }
        order.push_back(static_cast<uint8_t>(at - map.positions.begin()));
    }
    // Each of the stream's channels once (a map naming one position twice
    // is not an order).
    std::vector<uint8_t> seen(order);
    std::sort(seen.begin(), seen.end());
    if (std::adjacent_find(seen.begin(), seen.end()) != seen.end()) {
        return std::nullopt;
    }
    return order;
}

std::vector<uint8_t> inverse_order(const std::vector<uint8_t>& order) {
    std::vector<uint8_t> inverse(order.size());
    for (size_t i = 0; i < order.size(); ++i) {
        inverse[order[i]] = static_cast<uint8_t>(i);
    }
    return inverse;
}

void reorder_frames(std::span<const uint8_t> in, std::span<uint8_t> out,
                    const std::vector<uint8_t>& order, uint32_t sample_bytes) {
    const size_t frame_bytes = order.size() * sample_bytes;
    for (size_t frame = 0; frame + frame_bytes <= in.size() && frame + frame_bytes <= out.size();
         frame += frame_bytes) {
        for (size_t channel = 0; channel < order.size(); ++channel) {
            std::memcpy(out.data() + frame + channel * sample_bytes,
                        in.data() + frame + size_t{order[channel]} * sample_bytes, sample_bytes);
        }
    }
}

} // namespace audiod::pulse
