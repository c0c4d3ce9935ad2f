// A PortAudio device opened in a helper process (portaudio_helper.cpp)
// instead of the server's: the sink's or source's RT thread moves its
// quanta through a shared ring (helper_ring.h), and the helper plays or
// records them on the device, paced by it.
//
// Why a process. PortAudio 19.6 cannot let go of a JACK stream whose
// server died: closing it waits for ever, or aborts the process (it asserts
// that JACK unregistered the stream's ports), and only Pa_Terminate, which
// closes it first, would make it see a new JACK. In the server, such a
// stream has to be left open, and PortAudio's JACK devices can never be
// opened again. In a helper, the stream simply ends with its process, and
// the next open starts a new PortAudio, and a new libjack, that see the
// JACK server as it is now: a portaudio sink on JACK comes back when jackd
// restarts, as the jack sink does. And no PortAudio call, hung or aborting,
// can take the server with it: a helper that does not quit when told is
// killed.
//
// Which devices. `process = "own"` puts any PortAudio device in a helper;
// `process = "server"` keeps any, JACK too, in the server (as before
// 2026-12, with the limits above). By default JACK devices (host-api =
// "jack", or a device that turns out to be JACK's) get a helper and the
// others stay in the server, where a quantum costs no hop between
// processes.
//
// The cost. A playback ring holds up to two quanta on top of what the
// device keeps queued, which the latency reported includes; a capture
// ring, half a second that the source drains as fast as it can (no
// latency, just room to fall behind). Each quantum costs a wake-up of each
// process (an eventfd each way).
//
// Opening. The helper's PortAudio lists every device afresh (seconds on a
// loaded machine). A first open waits 10 s for its answer; a reopen, once a
// second while clients wait on the control thread, 1 s. A helper still
// opening when that runs out is kept, not killed, and the next open of
// the same sink or source, with the same options, takes its answer.
#pragma once

#include "audiod/module.h"

#include <cstdint>
#include <string>

namespace audiod::portaudio {

struct RemoteDevice;

// Starts a helper that opens the device the options name, and waits for its
// answer. Returns nullptr with a message in `error` and a negative errno in
// `code` if the device cannot be opened. Thread: control.
RemoteDevice* open_remote(const audiod_host* host, const audiod_device_config& config, bool capture,
                          audiod_open_info* info, std::string* error, int* code);
// Asks the helper to quit, kills it if it has not within 500 ms, and lets
// go of everything. Thread: control.
void close_remote(RemoteDevice* device);

// Gives the helper this thread's scheduling and tells it to start the
// stream. Thread: rt.
int start_remote(RemoteDevice& device);
// Sleeps until a quantum fits in the ring (playback) or is in it
// (capture), for at most two quanta and 600 ms (the helper gives the
// device two quanta and 500 ms), then -ETIMEDOUT; the device's error once
// the helper reports one; -ENODEV if the helper is gone. Thread: rt.
int wait_remote(RemoteDevice& device);
// Puts `count` frames in the ring (after wait_remote) and wakes the
// helper. Thread: rt.
int write_remote(RemoteDevice& device, const void* frames, uint32_t count);
// Takes `count` frames from the ring (after wait_remote). Thread: rt.
int read_remote(RemoteDevice& device, void* frames, uint32_t count);

uint64_t remote_xruns(const RemoteDevice& device);
// The helper's description of its device, and "helper-pid=N". Thread: any.
size_t describe_remote(const RemoteDevice& device, char* text, size_t size);

} // namespace audiod::portaudio
