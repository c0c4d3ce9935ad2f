#include "recovery_escape.h"

#include <alsa/asoundlib.h>

#include <csetjmp>
#include <cstdarg>
#include <cstdio>
#include <cstring>

// alsa-lib's snd_lib_error_set_local (since 1.1.6). alsa-lib 1.2.8's header
// declares it outside its `extern "C"`, so the name it declares does not
// link; this is the same function, declared with C linkage under the
// symbol's own name.
extern "C" snd_local_error_handler_t
audiod_alsa_set_local_error(snd_local_error_handler_t func) __asm__("snd_lib_error_set_local");

namespace audiod::portaudio {

namespace {

struct Escape {
    sigjmp_buf to;
    int failed_recoveries = 0;
};

// The escape of the call this thread is in, or nullptr.
thread_local Escape* t_escape = nullptr;

void on_alsa_message(const char* file, int line, const char* function, int err, const char* fmt,
                     va_list args) {
    Escape* const escape = t_escape;
    if (escape != nullptr && function != nullptr && std::strcmp(function, "snd_pcm_recover") == 0 &&
        std::strncmp(fmt, "cannot recovery", 15) == 0 && ++escape->failed_recoveries >= 2) {
        siglongjmp(escape->to, 1);
    }
    std::fprintf(stderr, "ALSA lib %s:%i:(%s) ", file, line, function);
    std::vfprintf(stderr, fmt, args);
    if (err != 0) {
        std::fprintf(stderr, ": %s", snd_strerror(err));
    }
    std::fputc('\n', stderr);
}

struct Transfer {
    PaStream* stream;
    void* read_to;
    const void* write_from;
    unsigned long count;
};

PaError call(const Transfer& transfer) {
    return transfer.read_to != nullptr
               ? Pa_ReadStream(transfer.stream, transfer.read_to, transfer.count)
               : Pa_WriteStream(transfer.stream, transfer.write_from, transfer.count);
}

PaError escapable(const Transfer& transfer) {
    Escape escape;
    const snd_local_error_handler_t outer = audiod_alsa_set_local_error(on_alsa_message);
    t_escape = &escape;
    // Nothing between here and the jump has a destructor, and nothing this
    // frame reads after it is changed between here and the jump (`result`
    // only once the call has returned).
    PaError result = paDeviceUnavailable;
    if (sigsetjmp(escape.to, 0) == 0) {
        result = call(transfer);
    }
    t_escape = nullptr;
    audiod_alsa_set_local_error(outer);
    return result;
}

} // namespace

PaError read_stream(PaStream* stream, void* frames, unsigned long count) {
    return escapable({stream, frames, nullptr, count});
}

PaError write_stream(PaStream* stream, const void* frames, unsigned long count) {
    return escapable({stream, nullptr, frames, count});
}

} // namespace audiod::portaudio
