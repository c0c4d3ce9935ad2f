// An engine error (AUDIOD_E_*) as the pulse error a libpulse client is
// answered with (what pa_context_errno() then says).
#pragma once

#include "audiod/audiod.h"
#include "pulse/protocol.h"

namespace audiod::pulse {

[[nodiscard]] inline Error pulse_error(int code) noexcept {
    switch (code) {
    case AUDIOD_E_NOTSUPPORTED:
        return Error::notsupported;
    case AUDIOD_E_NOENTITY:
        return Error::noentity;
    case AUDIOD_E_INVALID:
        return Error::invalid;
    case AUDIOD_E_BUSY:
    case AUDIOD_E_REFUSED:
        return Error::busy;
    case AUDIOD_E_DENIED:
        return Error::access;
    case AUDIOD_E_BADSTATE:
        return Error::badstate;
    default:
        return Error::internal;
    }
}

} // namespace audiod::pulse
