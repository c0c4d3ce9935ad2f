// audiod's error codes as the negative errno values ALSA plugins return,
// shared by the PCM and the control plugin.
#pragma once

#include "audiod/audiod.h"

#include <cerrno>

namespace audiod::alsa_plugin {

inline int to_errno(int audiod_code) {
    switch (audiod_code) {
    case AUDIOD_E_INVALID:
    case AUDIOD_E_NOTSUPPORTED:
        return -EINVAL;
    case AUDIOD_E_NOSERVER:
        return -ECONNREFUSED;
    case AUDIOD_E_NOENTITY:
        return -ENOENT;
    case AUDIOD_E_NOMEM:
        return -ENOMEM;
    case AUDIOD_E_BUSY:
    case AUDIOD_E_AGAIN:
        return -EBUSY;
    case AUDIOD_E_TIMEOUT:
        return -ETIMEDOUT;
    case AUDIOD_E_DENIED:
        return -EACCES;
    case AUDIOD_E_DISCONNECTED:
    case AUDIOD_E_STALLED:
    case AUDIOD_E_KILLED:
        return -ENODEV;
    default:
        return -EIO;
    }
}

} // namespace audiod::alsa_plugin
