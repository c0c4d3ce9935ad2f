#include "pa_host.h"

#include <alsa/asoundlib.h>

#include <cctype>
#include <cerrno>
#include <chrono>
#include <condition_variable>
#include <cstdarg>
#include <cstdlib>
#include <mutex>

// alsa-lib 1.2.8's error.h declares snd_lib_error_set_local outside its
// extern "C" block, so C++ would look for a mangled name: reach the C
// symbol under a name of ours.
extern "C" snd_local_error_handler_t
alsa_error_set_local(snd_local_error_handler_t handler) __asm__("snd_lib_error_set_local");

namespace audiod::portaudio {

namespace {

void quiet(const char*, int, const char*, int, const char*, va_list) {}

} // namespace

PaLibrary::PaLibrary() {
    // A handler for this thread only: other sinks' threads keep theirs.
    const snd_local_error_handler_t previous = alsa_error_set_local(quiet);
    error_ = Pa_Initialize();
    alsa_error_set_local(previous);
}

PaLibrary::~PaLibrary() {
    if (error_ == paNoError) {
        Pa_Terminate();
    }
}

namespace {

// The closes handed to threads of their own and not yet done. Never
// destroyed, like setup_mutex.
struct Closes {
    std::mutex mutex;
    std::condition_variable ended;
    int under_way = 0;
};

Closes& closes() {
    static auto* const all = new Closes;
    return *all;
}

// Ending the process beneath a close under way on its own thread pulls
// PortAudio's and alsa-lib's state from under that thread: a server under
// ASan ended on SIGABRT after a stop so, its source's close still running;
// and, once that was waited for by taking setup_mutex, again (LeakSanitizer:
// the stream leaked) when the close's thread had not yet taken the mutex
// as the exit did. Up to 2 s in all: a close that hangs for ever (JACK)
// must not hang the exit.
void wait_for_closes_at_exit() {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(2);
    {
        Closes& c = closes();
        std::unique_lock lock(c.mutex);
        c.ended.wait_until(lock, deadline, [&] { return c.under_way == 0; });
    }
    if (setup_mutex().try_lock_until(deadline)) {
        // Kept: nothing opens or closes a device from now on.
    }
}

} // namespace

void close_begins() {
    Closes& c = closes();
    const std::lock_guard lock(c.mutex);
    ++c.under_way;
}

void close_ends() {
    Closes& c = closes();
    {
        const std::lock_guard lock(c.mutex);
        --c.under_way;
    }
    c.ended.notify_all();
}

std::timed_mutex& setup_mutex() {
    // Never destroyed: a close may still hold it as the process ends.
    static std::timed_mutex* const mutex = [] {
        auto* created = new std::timed_mutex;
        std::atexit(wait_for_closes_at_exit);
        return created;
    }();
    return *mutex;
}

std::string api_name(PaHostApiIndex api) {
    const PaHostApiInfo* info = Pa_GetHostApiInfo(api);
    if (info == nullptr) {
        return "unknown";
    }
    switch (info->type) {
    case paALSA:
        return "alsa";
    case paJACK:
        return "jack";
    case paOSS:
        return "oss";
    default:
        break;
    }
    std::string name = info->name != nullptr ? info->name : "unknown";
    for (char& c : name) {
        c = c == ' ' ? '-' : static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    }
    return name;
}

std::vector<Candidate> candidates(bool capture) {
    std::vector<Candidate> out;
    const PaDeviceIndex count = Pa_GetDeviceCount();
    for (PaDeviceIndex i = 0; i < count; ++i) {
        const PaDeviceInfo* info = Pa_GetDeviceInfo(i);
        if (info == nullptr) {
            continue;
        }
        out.push_back({i, info->name != nullptr ? info->name : "", api_name(info->hostApi),
                       capture ? info->maxInputChannels : info->maxOutputChannels});
    }
    return out;
}

int default_device(const std::optional<std::string>& api, bool capture) {
    if (!api) {
        return capture ? Pa_GetDefaultInputDevice() : Pa_GetDefaultOutputDevice();
    }
    for (PaHostApiIndex a = 0; a < Pa_GetHostApiCount(); ++a) {
        if (api_name(a) == *api) {
            const PaHostApiInfo* info = Pa_GetHostApiInfo(a);
            return capture ? info->defaultInputDevice : info->defaultOutputDevice;
        }
    }
    return -1;
}

std::string error_text(PaError error) {
    std::string text = Pa_GetErrorText(error);
    if (error == paUnanticipatedHostError) {
        if (const PaHostErrorInfo* host = Pa_GetLastHostErrorInfo();
            host != nullptr && host->errorText != nullptr && host->errorText[0] != '\0') {
            text += std::string(": ") + host->errorText;
        }
    }
    return text;
}

int error_code(PaError error) {
    if (error == paDeviceUnavailable || error == paInvalidDevice) {
        return -ENODEV;
    }
    if (error == paUnanticipatedHostError) {
        const PaHostErrorInfo* host = Pa_GetLastHostErrorInfo();
        // The ALSA host API reports ALSA's own codes, negative errno values.
        // (Its hostApiType is not always set: PortAudio leaves -1 there,
        // which is no PaHostApiTypeId, so it is not read.)
        if (host != nullptr && host->errorCode < 0 && host->errorCode > -4096) {
            return static_cast<int>(host->errorCode);
        }
        return -ENODEV;
    }
    return -EIO;
}

} // namespace audiod::portaudio
