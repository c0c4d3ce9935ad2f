#include "engine_rig.h"
#include "fixtures/fixture_signals.h"

#include <boost/test/unit_test.hpp>

#include <cstring>

namespace audiod::test {

EngineRig::EngineRig(bool two_sinks)
    : loader("/nonexistent")
    , state("") {
    loader.add_builtin("stepped", &stepped_module());
    ServerConfig config;
    config.quantum = 64;
    config.rt_priority = 0;
    config.default_sink = "s1";
    config.sinks.push_back({"s1", "stepped", {}, 1});
    if (two_sinks) {
        // A different quantum at the destination.
        config.sinks.push_back({"s2", "stepped", {{"quantum", "32"}}, 2});
    }
    engine = std::make_unique<Engine>(config, loader, state);
    BOOST_REQUIRE(engine->start().ok());
    if (stepped_devices().size() != (two_sinks ? 2u : 1u)) {
        // A device an earlier test left open: the engine's destructor
        // would wait for these threads' permits for ever.
        for (SteppedDevice* device : stepped_devices()) {
            device->stopping = true;
        }
        BOOST_FAIL(stepped_devices().size() << " stepped devices are open");
    }
    s1 = stepped_devices()[0];
    s2 = two_sinks ? stepped_devices()[1] : nullptr;
}

EngineRig::~EngineRig() {
    // Only the devices of sinks still open: an unloaded one is gone.
    for (SteppedDevice* device : stepped_devices()) {
        device->stopping = true;
    }
    engine->stop();
}

Stream& EngineRig::play(uint64_t frames) {
    StreamRequest request;
    request.client_id = 1;
    request.app = "rig";
    request.params.format = static_cast<uint32_t>(SampleFormat::s16le);
    request.params.rate = 48000;
    request.params.channels = 2;
    request.params.buffer_frames = 4800;
    auto created = engine->create_stream(request);
    BOOST_REQUIRE(std::holds_alternative<Stream*>(created));
    Stream& stream = *std::get<Stream*>(created);
    const auto samples = make_signal("sequence", frames, 2, 0, 0);
    std::memcpy(const_cast<uint8_t*>(stream.ring.data()), samples.data(), samples.size() * 2);
    stream.ring.header()->client_pos.store(frames);
    stream.ring.header()->client_flags.store(kClientFlagStarted);
    return stream;
}

std::vector<int64_t> EngineRig::heard(const SteppedDevice& device) {
    const size_t bytes = device.captured_bytes.load();
    std::vector<int16_t> samples(bytes / 2);
    std::memcpy(samples.data(), device.captured.get(), bytes);
    std::vector<int64_t> out;
    for (size_t f = 0; f < samples.size() / 2; ++f) {
        const bool silent = samples[2 * f] == 0 && samples[2 * f + 1] == 0;
        out.push_back(
            silent ? -1
                   : static_cast<int64_t>(sequence_number(samples[2 * f], samples[2 * f + 1])));
    }
    return out;
}

} // namespace audiod::test
