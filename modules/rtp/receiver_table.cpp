#include "receiver_table.h"

#include <algorithm>
#include <cstdio>
#include <cstring>

namespace audiod::rtp {

namespace {

bool name_char(char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
           std::strchr("._-/:@", c) != nullptr;
}

} // namespace

void ReceiverTable::take_rt(const RtcpSummary& summary, int64_t now_ns, uint32_t rate) noexcept {
    if (!summary.has_receiver_report) {
        return;
    }
    const uint32_t ssrc = summary.receiver.ssrc;
    size_t slot = kMax;
    size_t oldest = 0;
    for (size_t i = 0; i < kMax; ++i) {
        if (own_[i].heard_ns != 0 && own_[i].ssrc == ssrc) {
            slot = i;
            break;
        }
        if (own_[i].heard_ns < own_[oldest].heard_ns) {
            oldest = i;
        }
    }
    if (slot == kMax) {
        if (own_[oldest].heard_ns != 0 && now_ns - own_[oldest].heard_ns < kForgetNs) {
            return; // every slot taken by a receiver still reporting
        }
        slot = oldest;
        own_[slot] = {};
    }
    Receiver& r = own_[slot];
    r.ssrc = ssrc;
    r.heard_ns = now_ns;
    if (summary.cname_size > 0) {
        for (size_t i = 0; i < summary.cname_size && i + 1 < sizeof r.name; ++i) {
            r.name[i] = name_char(summary.cname[i]) ? summary.cname[i] : '_';
        }
        r.name[std::min<size_t>(summary.cname_size, sizeof r.name - 1)] = '\0';
    }
    r.fraction_lost = summary.receiver.fraction_lost;
    r.cumulative_lost = summary.receiver.cumulative_lost;
    r.jitter_ms = rate == 0 ? 0 : 1000.0 * summary.receiver.jitter / rate;
    r.has_playout = summary.has_playout;
    if (summary.has_playout) {
        r.playout = summary.playout;
    }
    published_[slot].publish(r);
}

size_t ReceiverTable::describe(char* text, size_t size, int64_t now_ns) const {
    if (size == 0) {
        return 0;
    }
    std::array<Receiver, kMax> heard{};
    size_t count = 0;
    for (const auto& slot : published_) {
        Receiver r = slot.read();
        if (r.heard_ns != 0 && now_ns - r.heard_ns < kForgetNs) {
            if (r.name[0] == '\0') { // a receiver that gave no CNAME
                std::snprintf(r.name, sizeof r.name, "ssrc-%u", r.ssrc);
            }
            heard[count++] = r;
        }
    }
    size_t used = 0;
    const auto put = [&](const char* format, auto... values) {
        if (used + 1 < size) {
            const int n = std::snprintf(text + used, size - used, format, values...);
            used += n < 0 ? 0 : std::min(static_cast<size_t>(n), size - used - 1);
        }
    };
    text[0] = '\0';
    if (count == 0) {
        return 0;
    }
    // A line a receiver, its values in the order receiver-fields names:
    // a sink's details travel in a string of at most 1 kB, and a house
    // has several rooms. A receiver that is not audiod's has no playout:
    // "-" for those.
    put("receivers=");
    for (size_t i = 0; i < count; ++i) {
        put(i == 0 ? "%s" : ",%s", heard[i].name);
    }
    put("\nreceiver-fields=%s\n", kFields);
    static constexpr const char* kClocks[] = {"none", "rtcp", "ptp", "none"};
    for (size_t i = 0; i < count; ++i) {
        const Receiver& r = heard[i];
        put("receiver.%s=", r.name);
        if (r.has_playout) {
            put("%s;%s;%.1f;%u;%u;%u;", r.playout.timed ? "yes" : "no",
                kClocks[r.playout.clock & 3], r.playout.sync_error_us, r.playout.realigns,
                unsigned{r.playout.link_offset_ms}, unsigned{r.playout.delay_ms});
        } else {
            put("-;-;-;-;-;-;");
        }
        put("%.1f;%.2f;%.1f\n", r.fraction_lost * 100.0 / 256, r.jitter_ms,
            static_cast<double>(now_ns - r.heard_ns) / 1e9);
    }
    return used;
}

} // namespace audiod::rtp
