// The portaudio module: a sink (portaudio_sink.cpp) and a source
// (portaudio_source.cpp) on any device PortAudio reaches, sharing
// pa_stream.h, and its device listing (portaudio_module.cpp).
#pragma once

#include "audiod/module.h"

namespace audiod::portaudio {

const audiod_sink_ops* sink_ops();
const audiod_source_ops* source_ops();

} // namespace audiod::portaudio
