// The real Engine on stepped sinks (stepped_sink.h): "s1" (64-frame quanta,
// the default) and, unless asked otherwise, "s2" (32-frame quanta). Their RT
// threads run a cycle only when the test steps them.
#pragma once

#include "engine/engine.h"
#include "stepped_sink.h"

#include <memory>
#include <vector>

namespace audiod::test {

struct EngineRig {
    explicit EngineRig(bool two_sinks = true);
    ~EngineRig();
    EngineRig(const EngineRig&) = delete;

    // A playback stream on the default sink whose client has written
    // `frames` frames of the "sequence" signal and started it.
    Stream& play(uint64_t frames);

    // Sequence numbers in a device's output, or -1 for silent frames.
    static std::vector<int64_t> heard(const SteppedDevice& device);

    ModuleLoader loader;
    AppStateStore state;
    std::unique_ptr<Engine> engine;
    SteppedDevice* s1 = nullptr;
    SteppedDevice* s2 = nullptr;
};

} // namespace audiod::test
