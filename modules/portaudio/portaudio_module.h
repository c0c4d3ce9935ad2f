// The portaudio module: a sink (portaudio_sink.cpp) on any device PortAudio
// reaches, and its device listing (portaudio_module.cpp).
#pragma once

#include "audiod/module.h"

namespace audiod::portaudio {

const audiod_sink_ops* sink_ops();

} // namespace audiod::portaudio
