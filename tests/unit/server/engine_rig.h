// The real Engine on stepped sinks (stepped_sink.h): "s1" (64-frame quanta,
// the default) and, unless asked otherwise, "s2" (32-frame quanta). Their RT
// threads run a cycle only when the test steps them.
#pragma once

#include "engine/engine.h"
#include "stepped_sink.h"

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace audiod::test {

struct EngineRig {
    explicit EngineRig(bool two_sinks = true);
    ~EngineRig();
    EngineRig(const EngineRig&) = delete;

    // A playback stream on the default sink whose client has written
    // `frames` frames of the "sequence" signal and started it.
    Stream& play(uint64_t frames);
    // A playback stream of application `app` whose client has written
    // `frames` frames of a constant `level` (both channels) and started it.
    Stream& play_level(int16_t level, uint64_t frames, const std::string& app = "rig");

    // The mean of the last `frames` frames' first channel that `device` played.
    static double level(const SteppedDevice& device, size_t frames);

    // Sequence numbers in a device's output, or -1 for silent frames.
    static std::vector<int64_t> heard(const SteppedDevice& device);

    ModuleLoader loader;
    AppStateStore state;
    std::unique_ptr<Engine> engine;
    SteppedDevice* s1 = nullptr;
    SteppedDevice* s2 = nullptr;
};

// The device dies: its wait() fails, and the RT thread stops, marks the
// device failed and posts its event (waited for, up to 10 s: the event
// comes a moment after failed() turns true). The event is left for the
// test to hand to the engine.
bool kill_device(SteppedDevice& stepped, const Device& device);

} // namespace audiod::test
