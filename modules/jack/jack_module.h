// The jack module's sink and source tables (jack_sink.cpp, jack_source.cpp).
#pragma once

#include "audiod/module.h"

namespace audiod::jack {

const audiod_sink_ops* sink_ops();
const audiod_source_ops* source_ops();

} // namespace audiod::jack
