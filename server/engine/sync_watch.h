// Whether each timed relay (a room's receiver played at the sender's
// times, a group's local member) is in step, announced when it changes:
// `audioctl watch` prints "stream-out-of-step" with why (realigned: its
// error jumped or grew past what the loop steers, and it was cut back into
// step; untimed: its sender's timing is gone; off-by-N-us: over kInStepUs
// off) and "stream-in-step" when it is back. A relay is watched from the
// first time it is timed, so that untimed relays (a capture card played
// into a sink) say nothing. Thread: control.
#pragma once

#include "engine/announcer.h"
#include "engine/relays.h"

#include <map>
#include <string>

namespace audiod {

class SyncWatch {
public:
    // How far off a relay may play and still be in step, µs; it is back in
    // step within half of it (so that one hovering near it does not flap).
    static constexpr double kInStepUs = 1000;

    // Looks at every relay and announces what changed since the last look.
    void check(const Relays& relays, const Announcer& announcer);

private:
    struct Seen {
        bool in_step = false;
        uint64_t realigns = 0;
        uint32_t stream = 0; // its playback stream: a relay started again is new
    };
    std::map<std::string, Seen> seen_; // by relay name
};

} // namespace audiod
