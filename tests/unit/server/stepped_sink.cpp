#include "stepped_sink.h"
#include "engine/stream_conversion.h"

#include "audiod/audiod.h"

#include <boost/test/unit_test.hpp>

#include <chrono>
#include <cstring>
#include <iterator>
#include <string>
#include <sys/eventfd.h>
#include <thread>

namespace audiod::test {

namespace {

// The last device opened; tests open one sink at a time.
SteppedDevice* g_last_device = nullptr;
std::vector<SteppedDevice*> g_devices;

// What stepped_open reads.
constexpr audiod_option_spec kOptions[] = {
    {"format", "enum", "s16le", "s16le|s32le|f32le", "the format it asks for"},
    {"latency", "integer", "0", "", "the latency it reports, in frames"},
};

int stepped_open(const audiod_host*, const audiod_device_config* config, void** instance,
                 audiod_open_info* info, char* error, size_t error_size) {
    auto* device = new SteppedDevice;
    info->format = AUDIOD_FORMAT_S16LE;
    info->latency_frames = 0;
    for (size_t i = 0; i < config->option_count; ++i) {
        const std::string key = config->options[i].key;
        const std::string value = config->options[i].value;
        if (key == "format") {
            info->format = audiod_format_from_name(value.c_str());
        } else if (key == "latency") {
            info->latency_frames = static_cast<uint32_t>(std::stoul(value));
        } else {
            std::snprintf(error, error_size, "unknown option %s", key.c_str());
            delete device;
            return -22;
        }
    }
    device->frame_bytes = audiod_format_sample_bytes(info->format) * config->channels;
    g_last_device = device;
    g_devices.push_back(device);
    *instance = device;
    return 0;
}

int stepped_start(void*) {
    return 0;
}

int stepped_wait(void* instance) {
    auto* device = static_cast<SteppedDevice*>(instance);
    device->waiting.store(true, std::memory_order_release);
    // Poll the stop flag now and then so that Device::stop() can join us.
    while (!device->permits.try_acquire_for(std::chrono::milliseconds(5))) {
        if (device->stopping.load()) {
            device->waiting.store(false, std::memory_order_release);
            return -125; // ECANCELED: ends the RT loop
        }
    }
    device->waiting.store(false, std::memory_order_release);
    device->waits_returned.fetch_add(1, std::memory_order_release);
    return 0;
}

int stepped_write(void* instance, const void* frames, uint32_t count) {
    auto* device = static_cast<SteppedDevice*>(instance);
    const size_t bytes = size_t{count} * device->frame_bytes;
    const size_t at = device->captured_bytes.load(std::memory_order_relaxed);
    if (at + bytes <= SteppedDevice::kCapacity) {
        std::memcpy(device->captured.get() + at, frames, bytes);
        device->captured_bytes.store(at + bytes, std::memory_order_release);
    }
    device->cycles.fetch_add(1, std::memory_order_release);
    return 0;
}

// As a source: a quantum of silence a cycle.
int stepped_read(void* instance, void* frames, uint32_t count) {
    auto* device = static_cast<SteppedDevice*>(instance);
    std::memset(frames, 0, size_t{count} * device->frame_bytes);
    device->cycles.fetch_add(1, std::memory_order_release);
    return 0;
}

void stepped_stop(void*) {}
void stepped_close(void* instance) {
    std::erase(g_devices, static_cast<SteppedDevice*>(instance));
    delete static_cast<SteppedDevice*>(instance);
}
uint64_t stepped_xruns(void*) {
    return 0;
}

const audiod_sink_ops kOps = {stepped_open, stepped_start,       stepped_wait,  stepped_write,
                              stepped_stop, stepped_close,       stepped_xruns, nullptr,
                              kOptions,     std::size(kOptions), nullptr,       nullptr};
const audiod_source_ops kSourceOps = {
    stepped_open,  stepped_start, stepped_wait, stepped_read,        stepped_stop, stepped_close,
    stepped_xruns, nullptr,       kOptions,     std::size(kOptions), nullptr,      nullptr};
const audiod_module kModule = {AUDIOD_MODULE_ABI_VERSION, "stepped", "test device", &kOps,
                               &kSourceOps};

audiod_host test_host() {
    audiod_host host{};
    host.abi_version = AUDIOD_MODULE_ABI_VERSION;
    host.log = [](int, const char*, const char*) {};
    return host;
}

} // namespace

const audiod_module& stepped_module() {
    return kModule;
}

std::vector<SteppedDevice*>& stepped_devices() {
    return g_devices;
}

void step(SteppedDevice& device, uint64_t cycles) {
    const uint64_t target = device.cycles.load() + cycles;
    device.permits.release(static_cast<std::ptrdiff_t>(cycles));
    const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    while (device.cycles.load(std::memory_order_acquire) < target) {
        BOOST_REQUIRE_MESSAGE(std::chrono::steady_clock::now() < give_up,
                              "RT cycles stalled: " << device.cycles.load() << " of " << target
                                                    << ", waits returned "
                                                    << device.waits_returned.load());
        std::this_thread::sleep_for(std::chrono::microseconds(200));
    }
}

SinkRig::SinkRig(DeviceFormat f, const char* output_format, std::string name)
    : format(f) {
    DeviceRequest request;
    request.name = std::move(name);
    request.type = "stepped";
    request.format = f;
    request.options.emplace_back("format", output_format);
    static const audiod_host host = test_host();
    auto opened = Device::open(kModule, host, request);
    BOOST_REQUIRE_MESSAGE(std::holds_alternative<std::unique_ptr<Device>>(opened),
                          "sink did not open");
    sink = std::move(std::get<std::unique_ptr<Device>>(opened));
    device = g_last_device;
    BOOST_REQUIRE(sink->start().ok());
}

SinkRig::~SinkRig() {
    if (device != nullptr) { // (a test may have closed it)
        device->stopping.store(true);
    }
    if (sink) { // (a test may have destroyed it)
        sink->stop();
        sink.reset();
    }
}

void SinkRig::run_cycles(uint64_t cycles) {
    step(*device, cycles);
}

Stream& SinkRig::add_stream(SampleFormat fmt, uint64_t capacity, float gain, uint32_t rate,
                            uint32_t channels, bool record) {
    const uint32_t id = static_cast<uint32_t>(streams.size() + 1);
    rate = rate == 0 ? format.rate : rate;
    channels = channels == 0 ? format.channels : channels;
    auto ring = StreamRing::create(id, fmt, rate, channels, capacity);
    BOOST_REQUIRE(std::holds_alternative<StreamRing>(ring));
    auto stream = std::make_unique<Stream>(std::move(std::get<StreamRing>(ring)),
                                           UniqueFd(::eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC)));
    stream->id = id;
    stream->format = fmt;
    stream->rate = rate;
    stream->channels = channels;
    stream->record = record;
    BOOST_REQUIRE(prepare_conversion(*stream, format, 0, Resampler::kDefaultQuality).ok());
    stream->placement = Placement(sink.get());
    stream->volume = gain;
    stream->rt.gain.reset(gain);
    Stream& ref = *stream;
    streams.push_back(std::move(stream));
    send({RtCommand::Kind::attach, &ref, 1.0f});
    return ref;
}

void SinkRig::write(Stream& stream, const void* frames, uint64_t count) {
    const uint64_t capacity = stream.ring.capacity();
    const uint32_t frame_bytes = stream.ring.frame_bytes();
    auto* data = const_cast<uint8_t*>(stream.ring.data());
    uint64_t& pos = write_pos_[&stream];
    const auto* src = static_cast<const uint8_t*>(frames);
    for (uint64_t i = 0; i < count; ++i) {
        std::memcpy(data + ((pos + i) % capacity) * frame_bytes, src + i * frame_bytes,
                    frame_bytes);
    }
    pos += count;
    stream.ring.header()->client_pos.store(pos, std::memory_order_release);
}

void SinkRig::set_client_flags(Stream& stream, uint32_t flags) {
    stream.ring.header()->client_flags.store(flags, std::memory_order_release);
}

void SinkRig::send(const RtCommand& command) {
    BOOST_REQUIRE(sink->send(command));
}

std::vector<RtEvent> SinkRig::events(size_t at_least) {
    std::vector<RtEvent> out;
    const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    for (;;) {
        RtEvent batch[16];
        const size_t n = sink->take_events(batch, 16);
        out.insert(out.end(), batch, batch + n);
        if (out.size() >= at_least || std::chrono::steady_clock::now() > give_up) {
            return out;
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
}

} // namespace audiod::test
