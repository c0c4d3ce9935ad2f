// The portaudio sink: plays the mix on any device PortAudio reaches (ALSA,
// JACK, OSS), driven by the device's clock.
//
//   [sinks.studio]
//   type = "portaudio"
//   device = "system"     # a name, exactly or a unique part of it, or an
//                         # index (audiod --list-devices); default: PortAudio's
//   host-api = "jack"     # only that host API's devices (alsa, jack, oss)
//   latency-ms = 10       # what the sink keeps queued (default: 3 quanta)
//   format = "s32"        # what PortAudio is given: s16, s32 (default), f32
//
// Why the blocking API and not a callback. The server's model is already
// "the device's clock drives a thread of ours": `wait` blocks until a
// quantum fits, `write` hands it over. PortAudio's blocking streams give
// exactly that, on our own real-time thread (our priority, our RT-safety
// checks, no PortAudio thread to promote with PaAlsa_EnableRealtimeScheduling),
// with no hand-off between threads: Pa_WriteStream converts straight into
// the device's buffer. A callback stream would run the cycle on
// PortAudio's thread, which the server's cycle cannot follow without a
// ring and a wake-up between the two threads — an extra copy and up to a
// quantum of extra latency — and PortAudio 19.6 can hang in Pa_StartStream
// when ALSA's start fails in callback mode. (Through JACK, PortAudio's
// blocking stream is itself a ring beside JACK's process callback; that
// ring is PortAudio's, sized by `latency-ms`.)
//
// `latency-ms` is also PortAudio's suggested latency, but the device's
// buffer comes out larger (an ALSA device asked for 85 ms holds 107), and
// PortAudio's own latency figure counts only part of it: the sink keeps no
// more than `latency-ms` queued (whole quanta, at least two), which is the
// latency it reports, and the rest of the buffer is headroom. `wait` asks
// how much is free (Pa_GetStreamWriteAvailable) and sleeps until enough
// should have played, so a cycle costs one or two wake-ups. Dither
// is off (the samples arrive as they were mixed: s16 material through s32
// to a 16-bit device is bit-exact). An underflow PortAudio reports counts
// as an xrun; any other error fails the sink, whose streams then move to
// another sink until the server reopens this one (once a second), which
// asks PortAudio for its devices afresh.
#include "audiod/audiod.h"
#include "pa_host.h"
#include "portaudio_module.h"
#include "sink_options.h"

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <ctime>
#include <memory>

namespace audiod::portaudio {

namespace {

struct PaSink {
    std::unique_ptr<PaLibrary> library;
    PaStream* stream = nullptr;
    uint32_t rate = 0;
    uint32_t quantum = 0;
    uint32_t buffer = 0; // frames the device (or PortAudio's ring) holds
    uint32_t keep = 0;   // frames the sink keeps queued: its latency
    std::string api;
    std::string device;
    double reported_ms = 0; // PortAudio's own latency figure
    std::atomic<uint64_t> xruns{0};
};

struct Format {
    const char* name;
    PaSampleFormat pa;
    int audiod;
};

constexpr Format kFormats[] = {{"s16", paInt16, AUDIOD_FORMAT_S16LE},
                               {"s32", paInt32, AUDIOD_FORMAT_S32LE},
                               {"f32", paFloat32, AUDIOD_FORMAT_F32LE}};

int fail(char* error, size_t size, const std::string& message, int code) {
    set_error(error, size, message);
    return code;
}

int sink_open(const audiod_host*, const audiod_sink_config* config, void** instance,
              audiod_sink_info* info, char* error, size_t error_size) {
    const SinkOptions options(*config);
    if (const auto key = options.unknown_key({"device", "host-api", "latency-ms", "format"})) {
        return fail(error, error_size,
                    "the portaudio sink has no option '" + *key +
                        "' (it takes device, host-api, latency-ms, format)",
                    -EINVAL);
    }
    const std::string format_name = options.get("format").value_or("s32");
    const Format* format = nullptr;
    for (const Format& f : kFormats) {
        format = format_name == f.name ? &f : format;
    }
    if (format == nullptr) {
        return fail(error, error_size, "format = " + format_name + " is not s16, s32 or f32",
                    -EINVAL);
    }
    double latency_ms = 3.0 * config->quantum * 1000 / config->rate;
    if (const auto text = options.get("latency-ms")) {
        uint64_t ms = 0;
        if (!parse_uint(*text, 2000, ms) || ms == 0) {
            return fail(error, error_size, "latency-ms = " + *text + " is not 1-2000", -EINVAL);
        }
        latency_ms = static_cast<double>(ms);
    }

    auto sink = std::make_unique<PaSink>();
    sink->library = std::make_unique<PaLibrary>();
    if (!sink->library->ok()) {
        return fail(error, error_size,
                    "cannot start PortAudio: " + error_text(sink->library->error()), -EIO);
    }
    DeviceRequest request;
    request.device = options.get("device");
    request.api = options.get("host-api");
    request.default_index = default_device(request.api, false);
    const auto chosen = match_device(candidates(false), request);
    if (const auto* why = std::get_if<std::string>(&chosen)) {
        return fail(error, error_size, *why, -ENODEV);
    }
    const int index = std::get<int>(chosen);
    const PaDeviceInfo* device = Pa_GetDeviceInfo(index);
    if (device->maxOutputChannels < static_cast<int>(config->channels)) {
        return fail(error, error_size,
                    "PortAudio device \"" + std::string(device->name) + "\" plays at most " +
                        std::to_string(device->maxOutputChannels) + " channels, not " +
                        std::to_string(config->channels),
                    -EINVAL);
    }
    PaStreamParameters params{};
    params.device = index;
    params.channelCount = static_cast<int>(config->channels);
    params.sampleFormat = format->pa;
    params.suggestedLatency = latency_ms / 1000;
    const PaError opened =
        Pa_OpenStream(&sink->stream, nullptr, &params, config->rate, config->quantum,
                      paDitherOff | paClipOff, nullptr, nullptr);
    if (opened != paNoError) {
        return fail(error, error_size,
                    "cannot open PortAudio device \"" + std::string(device->name) + "\" (" +
                        api_name(device->hostApi) + ") at " + std::to_string(config->rate) +
                        " Hz, " + std::to_string(config->channels) +
                        " channels: " + error_text(opened),
                    error_code(opened));
    }
    const PaStreamInfo* stream_info = Pa_GetStreamInfo(sink->stream);
    sink->rate = config->rate;
    sink->quantum = config->quantum;
    sink->api = api_name(device->hostApi);
    sink->device = device->name;
    sink->reported_ms = stream_info != nullptr ? stream_info->outputLatency * 1000 : 0;
    // Before the start, all of the buffer is free. PortAudio's latency
    // figure leaves some of it out (80 ms of a 107 ms ALSA buffer), and a
    // blocking stream may fill all of it: the sink keeps only what was
    // asked for queued, whole quanta, at least two.
    const long free_frames = Pa_GetStreamWriteAvailable(sink->stream);
    const uint32_t wanted =
        static_cast<uint32_t>(std::ceil(latency_ms * config->rate / 1000 / config->quantum)) *
        config->quantum;
    sink->buffer = free_frames > 0 ? static_cast<uint32_t>(free_frames) : wanted;
    sink->keep = std::clamp(wanted, std::min(2 * config->quantum, sink->buffer), sink->buffer);
    info->format = format->audiod;
    info->latency_frames = sink->keep;
    *instance = sink.release();
    return 0;
}

int sink_start(void* instance) {
    auto& sink = *static_cast<PaSink*>(instance);
    const PaError err = Pa_StartStream(sink.stream);
    return err == paNoError ? 0 : error_code(err);
}

void sleep_for_frames(uint32_t frames, uint32_t rate) {
    // At least 0.25 ms: a device whose position moves by whole periods
    // must not make this spin.
    const long ns =
        std::max<long>(250'000, static_cast<long>(uint64_t{frames} * 1'000'000'000 / rate));
    timespec t{ns / 1'000'000'000, ns % 1'000'000'000};
    clock_nanosleep(CLOCK_MONOTONIC, 0, &t, nullptr);
}

int sink_wait(void* instance) {
    auto& sink = *static_cast<PaSink*>(instance);
    timespec start{};
    clock_gettime(CLOCK_MONOTONIC, &start);
    const int64_t limit_ns = int64_t{2} * sink.quantum * 1'000'000'000 / sink.rate + 20'000'000;
    for (;;) {
        const long avail = Pa_GetStreamWriteAvailable(sink.stream);
        if (avail < 0) {
            return error_code(static_cast<PaError>(avail));
        }
        // Room for a quantum, and no more than `keep` queued once it is in.
        const uint64_t queued =
            sink.buffer > static_cast<uint64_t>(avail) ? sink.buffer - avail : 0;
        if (static_cast<uint64_t>(avail) >= sink.quantum && queued + sink.quantum <= sink.keep) {
            return 0;
        }
        timespec now{};
        clock_gettime(CLOCK_MONOTONIC, &now);
        if ((now.tv_sec - start.tv_sec) * 1'000'000'000 + (now.tv_nsec - start.tv_nsec) >
            limit_ns) {
            return -ETIMEDOUT; // a device that stopped taking frames
        }
        sleep_for_frames(static_cast<uint32_t>(queued + sink.quantum - sink.keep), sink.rate);
    }
}

int sink_write(void* instance, const void* frames, uint32_t count) {
    auto& sink = *static_cast<PaSink*>(instance);
    const PaError err = Pa_WriteStream(sink.stream, frames, count);
    if (err == paOutputUnderflowed) {
        sink.xruns.fetch_add(1, std::memory_order_relaxed);
        return 0;
    }
    return err == paNoError ? 0 : error_code(err);
}

void sink_stop(void* instance) {
    Pa_AbortStream(static_cast<PaSink*>(instance)->stream);
}

void sink_close(void* instance) {
    std::unique_ptr<PaSink> sink(static_cast<PaSink*>(instance));
    Pa_CloseStream(sink->stream);
}

uint64_t sink_xruns(void* instance) {
    return static_cast<PaSink*>(instance)->xruns.load(std::memory_order_relaxed);
}

size_t sink_describe(void* instance, char* text, size_t size) {
    const auto& sink = *static_cast<const PaSink*>(instance);
    const int n = std::snprintf(
        text, size, "host-api=%s\ndevice=%s\npa-latency-ms=%.1f\nbuffer-ms=%.1f\n",
        sink.api.c_str(), sink.device.c_str(), sink.reported_ms, sink.buffer * 1000.0 / sink.rate);
    return n < 0 ? 0 : std::min(static_cast<size_t>(n), size > 0 ? size - 1 : 0);
}

constexpr audiod_sink_ops kSinkOps = {sink_open, sink_start, sink_wait,  sink_write,
                                      sink_stop, sink_close, sink_xruns, sink_describe};

} // namespace

const audiod_sink_ops* sink_ops() {
    return &kSinkOps;
}

} // namespace audiod::portaudio
