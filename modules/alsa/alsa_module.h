// The alsa module: a sink (alsa_sink.cpp) and a source (alsa_source.cpp)
// on ALSA PCMs, sharing alsa_pcm.h.
#pragma once

#include "audiod/module.h"

namespace audiod::alsa {

const audiod_sink_ops* sink_ops();
const audiod_source_ops* source_ops();

} // namespace audiod::alsa
