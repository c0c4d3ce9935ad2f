// Pa_ReadStream and Pa_WriteStream with a way out of PortAudio 19.6's
// endless xrun recovery.
//
// PortAudio 19.6 (Debian 12's) never returns from a blocking read or write
// whose ALSA device vanishes during the call, if the device reports that as
// an xrun (as plugin devices do: ioplug turns any error into one). Its
// recovery, snd_pcm_recover, cannot prepare the device again; its restart
// (drop, prepare, start) fails the same way; and the failure jumps back into
// the recovery, for ever, at full speed, six lines of log each time (fixed
// upstream in June 2025: PortAudio 87e35e7). A check made before the call
// (check_present, pa_stream.h) cannot see a device that goes during it; the
// server's watchdog can give such a thread up, but not stop it spinning.
//
// These wrappers listen, on the calling thread only, to what alsa-lib
// reports (snd_lib_error_set_local). The second "cannot recovery" in one
// call means the recovery and then the restart both failed: the call is
// left there (siglongjmp) and reports paDeviceUnavailable. Leaving there is
// safe: alsa-lib has returned from the failed recovery and holds no lock,
// PortAudio holds none between its recovery and its restart, and neither
// has allocated anything on the heap for the call (both are C: no
// destructor is skipped). Every other alsa-lib message is printed as
// alsa-lib would print it. Thread: the device's RT thread (they allocate,
// lock and log nothing while the device works).
#pragma once

#include <portaudio.h>

namespace audiod::portaudio {

PaError read_stream(PaStream* stream, void* frames, unsigned long count);
PaError write_stream(PaStream* stream, const void* frames, unsigned long count);

} // namespace audiod::portaudio
