// A frame of a stream's ring and when it is heard (CLOCK_MONOTONIC ns):
// for a playback stream, when its sink plays it; for a record stream of a
// source, when the source means it to be heard (a network stream's playout
// time; a monitor's records have none). For the streams that ask
// (Stream::anchored: a relay's), the device's RT thread publishes one each
// cycle that moves frames (Stream::heard), for a source played into a sink
// at its stamped times (server/engine/source_relay.h).
#pragma once

#include <cstdint>

namespace audiod {

struct TimeAnchor {
    uint64_t position = 0;
    int64_t ns = 0; // 0: not known
    // How far apart in time the stream's frames are heard, from this
    // cycle and the one before (a sink's true pace, a source's stamped
    // one); 0: not known (the first cycle, or a gap between them).
    double ns_per_frame = 0;

    // When `at` (a ring position) is heard, at this pace or `nominal`.
    [[nodiscard]] double heard_at(uint64_t at, double nominal) const noexcept {
        const double pace = ns_per_frame != 0 ? ns_per_frame : nominal;
        return static_cast<double>(ns) +
               (static_cast<double>(at) - static_cast<double>(position)) * pace;
    }
};

} // namespace audiod
