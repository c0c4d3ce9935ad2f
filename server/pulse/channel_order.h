// Channel order. A libpulse stream names its channels (its channel map);
// audiod's rings hold them in audiod's standard order for their count
// (server_facts.h, standard_channel_map). A stream whose map is another
// order of the same positions (front-right first; 5.1 with the LFE last,
// as some decoders write it) is put in order on its way into the ring,
// and a record stream's audio back into its own order on its way out. A
// map that names positions the standard order does not have (aux
// channels, a top speaker) is taken in the order given.
// Thread: any (pure).
#pragma once

#include "pulse/tagstruct.h"

#include <cstdint>
#include <optional>
#include <span>
#include <vector>

namespace audiod::pulse {

// For each channel in the standard order, which of the stream's channels
// it is; nullopt if the stream's order is the standard one, or cannot be
// put in it.
[[nodiscard]] std::optional<std::vector<uint8_t>> standard_order_of(const ChannelMap& map);

// The other way: for each of the stream's channels, which standard one.
[[nodiscard]] std::vector<uint8_t> inverse_order(const std::vector<uint8_t>& order);

// Rewrites whole frames of `frame_bytes` (channels × `sample_bytes`) so
// that channel i of each frame out is channel order[i] of the frame in.
// `in` and `out` are the same size, a whole number of frames, apart.
void reorder_frames(std::span<const uint8_t> in, std::span<uint8_t> out,
                    const std::vector<uint8_t>& order, uint32_t sample_bytes);

} // namespace audiod::pulse
