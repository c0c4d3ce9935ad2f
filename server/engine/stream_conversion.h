// Setting up a stream's conversion for the sink it is about to be attached
// to: whether it can be mixed as it is, its channel mix, its resampler.
#pragma once

#include "device/device.h"
#include "device/stream.h"

#include "common/status.h"

namespace audiod {

// Fills stream.conversion for a sink of `format` whose device adds
// `sink_latency_frames`, and stores in the ring the latency the client
// counts in its delay (in the stream's own frames). A resampler for the
// same rates is kept, with its filter state, across moves. Fails only when
// memory for a resampler runs out. Thread: control (allocates), while no RT
// thread holds the stream.
Status prepare_conversion(Stream& stream, const DeviceFormat& format, uint32_t sink_latency_frames,
                          int quality);

} // namespace audiod
