// The RTP source's module functions (audiod/module.h), for rtp_module.cpp.
#pragma once

#include "audiod/module.h"

namespace audiod::rtp {

const audiod_source_ops* source_ops();

} // namespace audiod::rtp
