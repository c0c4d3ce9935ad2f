// What audiod_make_thread_realtime tries when the priority asked for is
// refused: as high as RLIMIT_RTPRIO allows, if that is anything.
#pragma once

#include <sys/resource.h>

namespace audiod::client {

// The priority to try instead of `wanted` under the soft limit
// `rtprio_limit`; 0 for none.
[[nodiscard]] constexpr int fallback_rt_priority(int wanted, rlim_t rtprio_limit) noexcept {
    return rtprio_limit > 0 && rtprio_limit < static_cast<rlim_t>(wanted)
               ? static_cast<int>(rtprio_limit)
               : 0;
}

} // namespace audiod::client
