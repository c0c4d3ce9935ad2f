#include "pa_stream.h"
#include "monotonic_time.h"

#include "audiod/audiod.h"
#include "device_options.h"

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <ctime>
#include <future>
#include <mutex>
#include <thread>
#include <vector>

namespace audiod::portaudio {

namespace {

struct Format {
    const char* name;
    PaSampleFormat pa;
    int audiod;
    uint32_t bytes;
};

constexpr Format kFormats[] = {{"s16", paInt16, AUDIOD_FORMAT_S16LE, 2},
                               {"s32", paInt32, AUDIOD_FORMAT_S32LE, 4},
                               {"f32", paFloat32, AUDIOD_FORMAT_F32LE, 4}};

void sleep_for_frames(uint64_t frames, uint32_t rate) {
    // At least 0.25 ms: a device whose position moves by whole periods
    // must not make this spin.
    const int64_t ns =
        std::max<int64_t>(250'000, static_cast<int64_t>(frames * 1'000'000'000 / rate));
    timespec t{static_cast<time_t>(ns / 1'000'000'000), static_cast<long>(ns % 1'000'000'000)};
    clock_nanosleep(CLOCK_MONOTONIC, 0, &t, nullptr);
}

// Set once a PortAudio JACK stream failed or was given up: PortAudio's one
// JACK client may then be one that JACK has dropped, and PortAudio aborts
// the process when it registers or unregisters a port on such a client
// (close_device says where).
std::atomic<bool> jack_given_up{false};

} // namespace

PaDevice* open_device(const audiod_host* host, const audiod_device_config& config, bool capture,
                      audiod_open_info* info, std::string* error, int* code, bool jack_here) {
    const DeviceOptions options(config);
    if (const auto refusal =
            options.check_keys(kOptions, capture ? "the portaudio source" : "the portaudio sink")) {
        return refuse(error, code, *refusal, -EINVAL);
    }
    const std::string format_name = options.get("format").value_or("s32");
    const Format* format = nullptr;
    for (const Format& f : kFormats) {
        format = format_name == f.name ? &f : format;
    }
    if (format == nullptr) {
        return refuse(error, code, "format = " + format_name + " is not s16, s32 or f32", -EINVAL);
    }
    double latency_ms = 3.0 * config.quantum * 1000 / config.rate;
    if (const auto text = options.get("latency-ms")) {
        uint64_t ms = 0;
        if (!parse_uint(*text, 2000, ms) || ms == 0) {
            return refuse(error, code, "latency-ms = " + *text + " is not 1-2000", -EINVAL);
        }
        latency_ms = static_cast<double>(ms);
    }

    // Never a wait for a close that hangs: the server's reopen comes back
    // a second later. (Taken before `dev`, whose PaLibrary it guards.)
    const std::unique_lock setup(setup_mutex(), std::try_to_lock);
    if (!setup.owns_lock()) {
        return refuse(error, code,
                      "PortAudio is still closing a stream on another thread; try again", -EAGAIN);
    }
    auto dev = std::make_unique<PaDevice>();
    dev->host = host;
    dev->library = std::make_unique<PaLibrary>();
    if (!dev->library->ok()) {
        return refuse(error, code, "cannot start PortAudio: " + error_text(dev->library->error()),
                      -EIO);
    }
    DeviceRequest request;
    request.device = options.get("device");
    request.api = options.get("host-api");
    request.capture = capture;
    request.default_index = default_device(request.api, capture);
    const auto chosen = match_device(candidates(capture), request);
    if (const auto* why = std::get_if<std::string>(&chosen)) {
        return refuse(error, code, *why, -ENODEV);
    }
    const int index = std::get<int>(chosen);
    const PaDeviceInfo* device = Pa_GetDeviceInfo(index);
    if (!jack_here && api_name(device->hostApi) == "jack") {
        *code = kOpenInHelper;
        return nullptr;
    }
    if (jack_given_up.load() && api_name(device->hostApi) == "jack") {
        return refuse(error, code,
                      "PortAudio's JACK stream failed earlier in this process, and PortAudio 19.6 "
                      "cannot safely use JACK again until audiod restarts (the jack sink comes "
                      "back by itself)",
                      -ENODEV);
    }
    const int channels = capture ? device->maxInputChannels : device->maxOutputChannels;
    if (channels < static_cast<int>(config.channels)) {
        return refuse(error, code,
                      "PortAudio device \"" + std::string(device->name) + "\" " +
                          (capture ? "records" : "plays") + " at most " + std::to_string(channels) +
                          " channels, not " + std::to_string(config.channels),
                      -EINVAL);
    }
    PaStreamParameters params{};
    params.device = index;
    params.channelCount = static_cast<int>(config.channels);
    params.sampleFormat = format->pa;
    params.suggestedLatency = latency_ms / 1000;
    const PaError opened =
        Pa_OpenStream(&dev->stream, capture ? &params : nullptr, capture ? nullptr : &params,
                      config.rate, config.quantum, paDitherOff | paClipOff, nullptr, nullptr);
    if (opened != paNoError) {
        return refuse(error, code,
                      "cannot open PortAudio device \"" + std::string(device->name) + "\" (" +
                          api_name(device->hostApi) + ") to " + (capture ? "record" : "play") +
                          " at " + std::to_string(config.rate) + " Hz, " +
                          std::to_string(config.channels) + " channels: " + error_text(opened),
                      error_code(opened));
    }
    const PaStreamInfo* stream_info = Pa_GetStreamInfo(dev->stream);
    dev->capture = capture;
    dev->rate = config.rate;
    dev->quantum = config.quantum;
    dev->frame_bytes = format->bytes * config.channels;
    dev->api = api_name(device->hostApi);
    dev->device = device->name;
    if (stream_info != nullptr) {
        dev->reported_ms =
            (capture ? stream_info->inputLatency : stream_info->outputLatency) * 1000;
    }
    const uint32_t wanted =
        static_cast<uint32_t>(std::ceil(latency_ms * config.rate / 1000 / config.quantum)) *
        config.quantum;
    if (capture) {
        // What was captured is read as soon as a quantum of it is there:
        // the device's own latency is all a recording adds.
        info->latency_frames =
            static_cast<uint32_t>(std::lround(dev->reported_ms * config.rate / 1000));
    } else {
        // Before the start, all of the buffer is free. PortAudio's latency
        // figure leaves some of it out (80 ms of a 107 ms ALSA buffer), and
        // a blocking stream may fill all of it: the sink keeps only what was
        // asked for queued, whole quanta, at least two.
        const long free_frames = Pa_GetStreamWriteAvailable(dev->stream);
        dev->buffer = free_frames > 0 ? static_cast<uint32_t>(free_frames) : wanted;
        dev->keep = std::clamp(wanted, std::min(2 * config.quantum, dev->buffer), dev->buffer);
        info->latency_frames = dev->keep;
    }
    info->format = format->audiod;
    return dev.release();
}

void close_device(PaDevice* device) {
    const std::string name = device->device;
    const audiod_host* host = device->host;
    // Started, and no longer active: JACK stopped it. Inside a write or
    // read: the watchdog gave the sink up while PortAudio waited for JACK.
    const bool stopped_by_jack =
        Pa_IsStreamStopped(device->stream) == 0 && Pa_IsStreamActive(device->stream) != 1;
    if (device->api == "jack" &&
        (device->failed.load() || device->in_call.load() || stopped_by_jack)) {
        jack_given_up.store(true);
        // Kept where LeakSanitizer sees it, and never destroyed: its
        // PaLibrary's Pa_Terminate would close it.
        static auto* const left_open = new std::vector<PaDevice*>;
        left_open->push_back(device);
        if (host != nullptr && host->log != nullptr) {
            host->log(AUDIOD_LOG_WARNING, "portaudio",
                      ("PortAudio's JACK stream on \"" + name +
                       "\" failed and is left open, and PortAudio's JACK devices are not opened "
                       "again until the server restarts: PortAudio 19.6 ends the process when "
                       "it touches the ports of a JACK client that JACK has dropped")
                          .c_str());
        }
        return;
    }
    std::promise<void> closed;
    std::future<void> done = closed.get_future();
    close_begins();
    try {
        std::thread([device, closed = std::move(closed)]() mutable {
            {
                const std::lock_guard setup(setup_mutex());
                std::unique_ptr<PaDevice> owned(device);
                Pa_AbortStream(owned->stream);
                Pa_CloseStream(owned->stream);
            } // Pa_Terminate, if it was the last, still under the lock
            closed.set_value();
            close_ends();
        }).detach();
    } catch (const std::system_error&) {
        close_ends();
        return; // no thread: the device is left open rather than risk a hang
    }
    if (done.wait_for(std::chrono::milliseconds(300)) != std::future_status::ready &&
        host != nullptr && host->log != nullptr) {
        host->log(AUDIOD_LOG_WARNING, "portaudio",
                  ("PortAudio did not close \"" + name +
                   "\" within 300 ms; left to a thread of its own. Until that returns, no "
                   "PortAudio device opens in the server (its reopen is tried every second)")
                      .c_str());
    }
}

int failing(PaDevice& device, int code) {
    if (code != 0) {
        device.failed.store(true, std::memory_order_relaxed);
    }
    return code;
}

int start_device(PaDevice& device) {
    const PaError err = Pa_StartStream(device.stream);
    return err == paNoError ? 0 : failing(device, error_code(err));
}

int wait_for_quantum(PaDevice& device) {
    // Generous, as the jack sink's wait: a dead JACK is seen by
    // Pa_IsStreamActive at once, and a JACK server without real-time rights
    // on a loaded machine can call no one for over 200 ms (a CI run failed
    // the sink so, twice in a second). Still short of the watchdog's 1 s.
    const int64_t deadline =
        monotonic_ns() + int64_t{2} * device.quantum * 1'000'000'000 / device.rate + 500'000'000;
    for (;;) {
        const long avail = device.capture ? Pa_GetStreamReadAvailable(device.stream)
                                          : Pa_GetStreamWriteAvailable(device.stream);
        if (avail < 0) {
            return failing(device, error_code(static_cast<PaError>(avail)));
        }
        uint64_t short_by = 0; // frames still to be played or captured
        if (device.capture) {
            short_by = static_cast<uint64_t>(avail) >= device.quantum ? 0 : device.quantum - avail;
        } else {
            // Room for a quantum, and no more than `keep` queued once it is in.
            const uint64_t queued =
                device.buffer > static_cast<uint64_t>(avail) ? device.buffer - avail : 0;
            short_by =
                queued + device.quantum > device.keep ? queued + device.quantum - device.keep : 0;
        }
        if (short_by == 0) {
            return 0;
        }
        if (Pa_IsStreamActive(device.stream) == 0) {
            return failing(device, -ENODEV); // it stopped by itself: the JACK server went away
        }
        if (monotonic_ns() > deadline) {
            return failing(device, -ETIMEDOUT); // a device that stopped moving
        }
        sleep_for_frames(short_by, device.rate);
    }
}

int check_present(PaDevice& device) {
    const long avail = device.capture ? Pa_GetStreamReadAvailable(device.stream)
                                      : Pa_GetStreamWriteAvailable(device.stream);
    if (avail == paInputOverflowed) {
        return 0; // an overrun, which the read reports (and counts) itself
    }
    return avail < 0 ? failing(device, error_code(static_cast<PaError>(avail))) : 0;
}

size_t describe_device(const PaDevice& device, char* text, size_t size) {
    // (A capture stream's buffer cannot be read before it fills.)
    const int n =
        device.capture
            ? std::snprintf(text, size, "host-api=%s\ndevice=%s\npa-latency-ms=%.1f\n",
                            device.api.c_str(), device.device.c_str(), device.reported_ms)
            : std::snprintf(text, size,
                            "host-api=%s\ndevice=%s\npa-latency-ms=%.1f\nbuffer-ms=%.1f\n",
                            device.api.c_str(), device.device.c_str(), device.reported_ms,
                            device.buffer * 1000.0 / device.rate);
    return n < 0 ? 0 : std::min(static_cast<size_t>(n), size > 0 ? size - 1 : 0);
}

} // namespace audiod::portaudio
