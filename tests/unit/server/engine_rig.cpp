#include "engine_rig.h"
#include "fixtures/fixture_signals.h"

#include <boost/test/unit_test.hpp>

#include <chrono>
#include <cstring>
#include <thread>

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

Stream& EngineRig::play_level(int16_t level, uint64_t frames, const std::string& app) {
    StreamRequest request;
    request.client_id = 1;
    request.app = app;
    request.params.format = static_cast<uint32_t>(SampleFormat::s16le);
    request.params.rate = 48000;
    request.params.channels = 2;
    request.params.buffer_frames = frames;
    request.params.volume = 1.0f;
    auto created = engine->create_stream(request);
    BOOST_REQUIRE(std::holds_alternative<Stream*>(created));
    Stream& stream = *std::get<Stream*>(created);
    BOOST_REQUIRE_GE(stream.ring.capacity(), frames);
    std::vector<int16_t> samples(frames * 2, level);
    std::memcpy(const_cast<uint8_t*>(stream.ring.data()), samples.data(), samples.size() * 2);
    stream.ring.header()->client_pos.store(frames);
    stream.ring.header()->client_flags.store(kClientFlagStarted);
    return stream;
}

double EngineRig::level(const SteppedDevice& device, size_t frames) {
    const size_t bytes = device.captured_bytes.load();
    const size_t available = bytes / 4;
    BOOST_REQUIRE_GE(available, frames);
    std::vector<int16_t> samples(frames * 2);
    std::memcpy(samples.data(), device.captured.get() + (available - frames) * 4, frames * 4);
    double sum = 0;
    for (size_t f = 0; f < frames; ++f) {
        sum += samples[2 * f];
    }
    return sum / static_cast<double>(frames);
}

bool kill_device(SteppedDevice& stepped, const Device& device) {
    stepped.stopping = true;
    const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    while (!device.rt_ended() && std::chrono::steady_clock::now() < give_up) {
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    return device.failed() && device.rt_ended();
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
