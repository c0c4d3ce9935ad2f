// The RTP sink's module functions (audiod/module.h), for rtp_module.cpp.
#pragma once

#include "audiod/module.h"

namespace audiod::rtp {

const audiod_sink_ops* sink_ops();

} // namespace audiod::rtp
