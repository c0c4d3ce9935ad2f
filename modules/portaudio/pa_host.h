// PortAudio as the module uses it: a reference to the library (Pa_Initialize
// and Pa_Terminate pair up, however many sinks and sources hold one), the
// devices it lists, and its errors as text and errno values.
// Thread: control (PortAudio's set-up calls are not thread-safe; the
// server makes them all on its control thread).
#pragma once

#include "device_match.h"

#include <portaudio.h>

#include <mutex>
#include <optional>
#include <string>
#include <vector>

namespace audiod::portaudio {

class PaLibrary {
public:
    // Initialises PortAudio, which lists every device of every host API
    // (slow with JACK about: done here, never per cycle). ALSA's complaints
    // about the PCMs it probes are kept off standard error.
    PaLibrary();
    ~PaLibrary();
    PaLibrary(const PaLibrary&) = delete;
    PaLibrary& operator=(const PaLibrary&) = delete;

    [[nodiscard]] bool ok() const noexcept { return error_ == paNoError; }
    [[nodiscard]] PaError error() const noexcept { return error_; }

private:
    PaError error_;
};

// PortAudio's set-up calls (Pa_Initialize and Pa_Terminate, the device
// list, opening and closing a stream) are not thread-safe, and a stream is
// closed on a thread of its own (close_device, pa_stream.h), which may
// still run when the control thread opens the next one: they take turns
// here. The process waits for it as it ends (up to 2 s), so that it never
// ends beneath a close under way. Thread: any.
std::timed_mutex& setup_mutex();

// A close handed to a thread of its own begins (before that thread is
// started) and ends (once it has closed): the process's end waits for the
// ones under way, even one whose thread has not yet taken setup_mutex.
// Thread: any.
void close_begins();
void close_ends();

// "alsa", "jack", "oss" ...: the name `host-api` takes for a host API.
std::string api_name(PaHostApiIndex api);

// Every device, with its channels in one direction.
std::vector<Candidate> candidates(bool capture);

// PortAudio's default device for a direction, of host API `api` if given;
// -1 if none.
int default_device(const std::optional<std::string>& api, bool capture);

// PortAudio's message for an error, with the host's own where it has one.
std::string error_text(PaError error);

// An errno value for the server: a device that went away is -ENODEV (the
// server then rescues its streams and reopens it), anything else -EIO.
int error_code(PaError error);

} // namespace audiod::portaudio
