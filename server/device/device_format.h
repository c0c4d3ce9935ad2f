// A device's format: the frames per second, channels and frames per cycle
// (quantum) that its RT thread mixes, captures and writes.
#pragma once

#include <cstdint>

namespace audiod {

struct DeviceFormat {
    uint32_t rate = 48000;
    uint32_t channels = 2;
    uint32_t quantum = 256;
};

} // namespace audiod
