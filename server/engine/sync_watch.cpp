#include "engine/sync_watch.h"

#include "device/stream.h"

#include <cmath>
#include <cstdio>

namespace audiod {

void SyncWatch::check(const Relays& relays, const Announcer& announcer) {
    std::map<std::string, Seen> now;
    for (const auto& relay : relays.all()) {
        const Stream& playback = relay->playback();
        const auto was = seen_.find(relay->name());
        const bool known = was != seen_.end() && was->second.stream == playback.id;
        if (!known && !relay->timed()) {
            continue; // not watched until it is timed
        }
        const uint64_t realigns = relay->realigns();
        const double error_us = relay->sync_error_us();
        std::string why;
        if (!relay->timed()) {
            why = "untimed";
        } else if (known && realigns != was->second.realigns) {
            why = "realigned";
        } else if (std::fabs(error_us) >
                   (known && was->second.in_step ? kInStepUs : kInStepUs / 2)) {
            char text[48];
            std::snprintf(text, sizeof text, "off-by-%.0f-us", error_us);
            why = text;
        }
        const bool in_step = why.empty();
        // A relay announces its first state only when it is in step: it
        // starts out of step (re-aligning) by nature.
        if ((known && in_step != was->second.in_step) || (!known && in_step) ||
            (known && !in_step && why == "realigned")) {
            proto::Event event;
            event.kind = in_step ? "stream-in-step" : "stream-out-of-step";
            event.stream_id = playback.id;
            event.app = playback.app;
            event.device = endpoint_name(playback);
            event.state = in_step ? "in-step" : why;
            announcer.event(event);
        }
        now[relay->name()] = {in_step, realigns, playback.id};
    }
    seen_ = std::move(now);
}

} // namespace audiod
