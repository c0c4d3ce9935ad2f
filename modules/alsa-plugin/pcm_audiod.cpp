// libasound_module_pcm_audiod.so: the ALSA PCM type "audiod", so that
// unmodified ALSA programs (aplay, mpv, mplayer, sox, PortAudio) play
// through the audiod server, and record from it (arecord). An ioplug plugin
// built on libaudiod's public C API; conf/alsa/50-audiod.conf defines
// `pcm.audiod`.
//
// Mapping ALSA onto a libaudiod stream:
//   - prepare creates the stream (MANUAL_START, so ALSA's start threshold
//     decides when sound starts); start starts it; drop (stop), and a
//     prepare after an xrun, flush it: what was queued is discarded and the
//     stream stays, with its id and volume (a player drops on every seek, so
//     `audioctl set-volume ID` must survive it).
//   - ALSA's hardware pointer is the stream's `consumed` count since the
//     last prepare, which keeps advancing at the nominal rate while
//     libaudiod keeps the clock for a stalled or lost server: a player never
//     freezes.
//   - delay is the stream's delay_frames: queued frames plus the sink's own
//     device latency.
//   - Capture is a record stream, created at start (so nothing recorded
//     before it is delivered); the hardware pointer is what the server has
//     written into it, and delay what waits to be read.
//   - The poll descriptor is an epoll set over the stream's wake-up
//     eventfd, an eventfd of the plugin's own (`ready`) and a timerfd.
//     ALSA programs expect a level ("readable while there is room for
//     avail_min frames"); the stream's eventfd is edge-like (the server
//     signals when the room crosses the threshold). The plugin keeps the
//     level with `ready`, which it sets when there is room that no signal
//     may announce (after a state change, or a write that left room) and
//     clears when there is none. While the stream plays, the timer is armed
//     for just after the server's cycle that will make room (libaudiod
//     foresees it from the cycles the server publishes), and the server
//     then does not signal the stream each period, which cost it more than
//     the mix. So the common period — woken by the timer, write a period,
//     no room left — costs one system call (re-arming the timer), where
//     re-arming a relative timer on every call cost five. Otherwise (not
//     started, paused, draining, capture, a server whose cycles stopped)
//     the server signals the eventfd and the timer fires every 50 ms as the
//     safety net: a poller is never left waiting for good, whatever happens
//     to the server (which libaudiod's keep-clock also covers).
//
// The server converts every format, rate (8-192 kHz) and channel count (1-8)
// it is given, so those pass straight through; `plug:audiod` converts what
// is left (big-endian, u16 ...).
//
// Configuration fields: `sink` (a sink name, or for capture a source name
// such as "speakers.monitor"; default: the server's default sink, or its
// monitor), `app` (the application name; default: the program's name) and
// `max_buffer_ms` (the longest buffer offered, 10-10000; default 2000).
#include "audiod/audiod.h"
#include "plugin_config.h"
#include "plugin_errors.h"

#include <alsa/asoundlib.h>
#include <alsa/pcm_external.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <fcntl.h>
#include <iterator>
#include <new>
#include <string>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/timerfd.h>
#include <unistd.h>

namespace {

using audiod::alsa_plugin::to_errno;

// The safety net's period: a poller looks again at least this often.
constexpr long kFallbackNs = 50'000'000;
// The largest buffer the server accepts, in milliseconds.
constexpr uint64_t kMaxLatencyMs = AUDIOD_MAX_LATENCY_MS;
// The longest buffer offered by default (max_buffer_ms), as a sound card
// offers one: programs that take the largest buffer on offer (speaker-test)
// then play for seconds, not minutes. ALSA bounds a plugin's buffer in
// bytes, so this is the time for 48 kHz stereo 16-bit frames (4 bytes);
// larger frames get less time, smaller ones more.
constexpr long kDefaultMaxBufferMs = 2000;
constexpr uint64_t kReferenceBytesPerMs = 48 * 4;

struct AudiodPcm {
    snd_pcm_ioplug_t io{};
    std::string sink;
    std::string app;
    audiod_context* context = nullptr;
    audiod_stream* stream = nullptr;
    int watched_fd = -1;             // the plugin's duplicate of the stream's eventfd, in `epoll`
    unsigned watched_generation = 0; // of that eventfd (audiod_stream_fd_generation)
    int epoll = -1;
    int ready = -1;               // eventfd: readable while `ready_signalled`
    bool ready_signalled = false; // what `ready` holds (only the plugin touches it)
    int timer = -1;
    bool timer_self_timed = false; // armed once for the server's next cycle, not periodic
    int format = AUDIOD_FORMAT_INVALID;
    snd_pcm_uframes_t avail_min = 1;
    snd_pcm_uframes_t boundary = 0;
    long max_buffer_ms = kDefaultMaxBufferMs;
    uint32_t ring_extra = 0; // frames of ring capacity beyond ALSA's buffer
    uint64_t base = 0;       // the stream's position at the last prepare: ALSA's 0
    bool written = false;    // frames went into the stream since it was created or flushed
    bool paused = false;     // the stream is paused on the server
    bool capture = false;    // a record stream: ALSA reads what the server writes
};

AudiodPcm& pcm_of(snd_pcm_ioplug_t* io) {
    return *static_cast<AudiodPcm*>(io->private_data);
}

void clear_timer(const AudiodPcm& pcm) {
    uint64_t expirations = 0;
    [[maybe_unused]] const ssize_t r = ::read(pcm.timer, &expirations, sizeof expirations);
}

// Frames in the stream between the two sides: queued to play, or (capture)
// recorded and not read yet. 0 without a stream.
uint64_t queued(const AudiodPcm& pcm) {
    audiod_stream_timing timing{};
    if (pcm.stream == nullptr || audiod_stream_get_timing(pcm.stream, &timing) != 0) {
        return 0;
    }
    return timing.written - timing.consumed;
}

// What ALSA will compute as avail: room in ALSA's buffer, or (capture)
// frames ready to read.
snd_pcm_uframes_t alsa_avail(const AudiodPcm& pcm) {
    const uint64_t q = queued(pcm);
    if (pcm.capture) {
        return static_cast<snd_pcm_uframes_t>(std::min<uint64_t>(q, pcm.io.buffer_size));
    }
    return q >= pcm.io.buffer_size ? 0 : static_cast<snd_pcm_uframes_t>(pcm.io.buffer_size - q);
}

// Whether the program should find the device ready: room for avail_min
// frames (capture: that many to read), a drained stream, or a state that
// needs its attention. Reads shared memory only.
bool poll_ready(const AudiodPcm& pcm) {
    switch (pcm.io.state) {
    case SND_PCM_STATE_PREPARED:
    case SND_PCM_STATE_RUNNING:
        return pcm.stream == nullptr || alsa_avail(pcm) >= pcm.avail_min;
    case SND_PCM_STATE_DRAINING:
        return queued(pcm) == 0;
    case SND_PCM_STATE_PAUSED:
        return false;
    default:
        return true;
    }
}

// Sets or clears `ready`: a system call only when that changes it.
void set_ready(AudiodPcm& pcm, bool ready) {
    if (ready == pcm.ready_signalled) {
        return;
    }
    uint64_t value = 1;
    [[maybe_unused]] const ssize_t r =
        ready ? ::write(pcm.ready, &value, sizeof value) : ::read(pcm.ready, &value, sizeof value);
    pcm.ready_signalled = ready;
}

// A playing stream waiting for room: arms the timer for just after the
// server's cycle that makes it (libaudiod foresees it from the cycles the
// server publishes, and the server then stops signalling the stream every
// period: audiod_stream_next_wakeup). Where that cannot be foreseen (not
// started, paused, draining, the server stalled; capture), the timer goes
// back to the periodic safety net and the server signals as usual.
// Returns whether the timer is now armed for the cycle; a system call only
// when it is, or when it changes back.
bool arm_timer(AudiodPcm& pcm) {
    uint64_t at = 0;
    if (!pcm.capture && pcm.stream != nullptr && pcm.io.state == SND_PCM_STATE_RUNNING &&
        !pcm.paused) {
        [[maybe_unused]] const int rc = audiod_stream_next_wakeup(pcm.stream, &at);
    }
    itimerspec spec{};
    if (at != 0) {
        spec.it_value.tv_sec = static_cast<time_t>(at / 1'000'000'000);
        spec.it_value.tv_nsec = static_cast<long>(at % 1'000'000'000);
        // Re-arming also clears an expiry not yet read.
        pcm.timer_self_timed = timerfd_settime(pcm.timer, TFD_TIMER_ABSTIME, &spec, nullptr) == 0;
        return pcm.timer_self_timed;
    }
    if (pcm.timer_self_timed) {
        spec.it_interval.tv_nsec = kFallbackNs;
        spec.it_value.tv_nsec = kFallbackNs;
        [[maybe_unused]] const int rc = timerfd_settime(pcm.timer, 0, &spec, nullptr);
        pcm.timer_self_timed = false;
    }
    return false;
}

// After a state change, or a poll that found nothing to do: every source
// cleared, then the level set from what is true now.
void refresh_poll(AudiodPcm& pcm) {
    if (pcm.stream != nullptr) {
        audiod_stream_ack_wakeup(pcm.stream);
    }
    if (poll_ready(pcm) || !arm_timer(pcm)) {
        clear_timer(pcm);
    }
    set_ready(pcm, poll_ready(pcm));
}

// After frames moved. Room left: make sure it reads as ready. None: arm
// the timer for the cycle that makes room, or clear the server's signal
// (either is the period's one system call), and look again, so that room
// which came meanwhile is not lost.
void after_transfer(AudiodPcm& pcm) {
    if (poll_ready(pcm)) {
        set_ready(pcm, true);
        return;
    }
    if (!arm_timer(pcm)) {
        audiod_stream_ack_wakeup(pcm.stream);
    }
    set_ready(pcm, poll_ready(pcm));
}

// Takes the stream's eventfd out of `epoll`. Through the plugin's own
// duplicate of it: an epoll set knows a descriptor by its open file, and
// once libaudiod has put a new eventfd behind the stream's descriptor
// number, that number no longer names the old one.
void unwatch_stream_fd(AudiodPcm& pcm) {
    if (pcm.watched_fd >= 0) {
        epoll_ctl(pcm.epoll, EPOLL_CTL_DEL, pcm.watched_fd, nullptr);
        ::close(pcm.watched_fd);
        pcm.watched_fd = -1;
    }
}

// Puts the stream's eventfd in `epoll`, and again after libaudiod re-bound
// the stream to a restarted server (the same number, a new eventfd behind
// it): without that, a player was woken only by the 50 ms timer from then
// on, and an old eventfd left signalled would keep the set readable.
void watch_stream_fd(AudiodPcm& pcm) {
    if (pcm.stream == nullptr) {
        unwatch_stream_fd(pcm);
        return;
    }
    // Read before the duplicate is made: a re-bind in between is seen next time.
    const unsigned generation = audiod_stream_fd_generation(pcm.stream);
    if (pcm.watched_fd >= 0 && generation == pcm.watched_generation) {
        return;
    }
    unwatch_stream_fd(pcm);
    pcm.watched_generation = generation;
    const int fd = ::fcntl(audiod_stream_fd(pcm.stream), F_DUPFD_CLOEXEC, 0);
    if (fd < 0) {
        return; // the timer still wakes the player
    }
    epoll_event event{};
    event.events = EPOLLIN;
    event.data.fd = fd;
    if (epoll_ctl(pcm.epoll, EPOLL_CTL_ADD, fd, &event) != 0) {
        ::close(fd);
        return;
    }
    pcm.watched_fd = fd;
}

void close_stream(AudiodPcm& pcm) {
    if (pcm.stream == nullptr) {
        return;
    }
    unwatch_stream_fd(pcm);
    audiod_stream_close(pcm.stream);
    pcm.stream = nullptr;
    pcm.written = false;
    pcm.paused = false;
    pcm.base = 0;
}

// Discards what a playback stream holds and keeps the stream; ALSA counts
// from 0 again. A server that cannot flush (an older one) gets a new stream.
void discard_queued(AudiodPcm& pcm) {
    if (pcm.stream == nullptr) {
        return;
    }
    if (pcm.paused) {
        // A drop ends a pause in ALSA; the stream must not stay paused.
        audiod_stream_resume(pcm.stream, -1);
        pcm.paused = false;
    }
    audiod_stream_timing timing{};
    if (audiod_stream_flush(pcm.stream, -1) != 0 ||
        audiod_stream_get_timing(pcm.stream, &timing) != 0) {
        close_stream(pcm);
        return;
    }
    pcm.base = timing.written;
    pcm.written = false;
}

int open_stream(AudiodPcm& pcm) {
    snd_pcm_ioplug_t& io = pcm.io;
    audiod_stream_params params;
    audiod_stream_params_init(&params);
    params.format = pcm.format;
    params.rate = io.rate;
    params.channels = io.channels;
    const uint64_t ms = (uint64_t{io.buffer_size} * 1000 + io.rate - 1) / std::max(1u, io.rate);
    params.latency_ms = static_cast<uint32_t>(std::clamp<uint64_t>(ms, 1, kMaxLatencyMs));
    params.sink = pcm.sink.empty() ? nullptr : pcm.sink.c_str();
    params.flags = pcm.capture ? AUDIOD_STREAM_RECORD : AUDIOD_STREAM_MANUAL_START;
    const int rc = audiod_stream_create(pcm.context, &params, &pcm.stream);
    if (rc != 0) {
        SNDERR("audiod: cannot create a stream: %s %s", audiod_strerror(rc),
               audiod_last_error(pcm.context));
        pcm.stream = nullptr;
        return to_errno(rc);
    }
    const uint32_t capacity = audiod_stream_buffer_frames(pcm.stream);
    // Room beyond ALSA's buffer shifts a writer's free-space threshold; a
    // reader's threshold is frames ready, whatever the capacity.
    pcm.ring_extra = capacity > io.buffer_size && !pcm.capture
                         ? capacity - static_cast<uint32_t>(io.buffer_size)
                         : 0;
    pcm.written = false;
    audiod_stream_set_wakeup_frames(pcm.stream, static_cast<uint32_t>(std::min<uint64_t>(
                                                    pcm.avail_min + pcm.ring_extra, capacity)));
    watch_stream_fd(pcm);
    return 0;
}

// ---- callbacks ---------------------------------------------------------------

// ALSA formats the server takes, and their audiod names.
struct FormatPair {
    snd_pcm_format_t alsa;
    int audiod;
};
constexpr FormatPair kFormats[] = {
    {SND_PCM_FORMAT_U8, AUDIOD_FORMAT_U8},        {SND_PCM_FORMAT_S16_LE, AUDIOD_FORMAT_S16LE},
    {SND_PCM_FORMAT_S24_LE, AUDIOD_FORMAT_S24LE}, {SND_PCM_FORMAT_S24_3LE, AUDIOD_FORMAT_S24_3LE},
    {SND_PCM_FORMAT_S32_LE, AUDIOD_FORMAT_S32LE}, {SND_PCM_FORMAT_FLOAT_LE, AUDIOD_FORMAT_F32LE},
};

int pcm_hw_params(snd_pcm_ioplug_t* io, snd_pcm_hw_params_t*) {
    AudiodPcm& pcm = pcm_of(io);
    close_stream(pcm);
    // Only frames smaller than the reference at low rates can come here
    // (8-bit mono at 8 kHz, say, with the largest buffer on offer).
    if (uint64_t{io->buffer_size} * 1000 > kMaxLatencyMs * io->rate) {
        SNDERR("audiod: a buffer of %lu frames at %u Hz is longer than the server's %u ms; "
               "ask for a shorter one (or lower max_buffer_ms)",
               static_cast<unsigned long>(io->buffer_size), io->rate, AUDIOD_MAX_LATENCY_MS);
        return -EINVAL;
    }
    for (const FormatPair& pair : kFormats) {
        if (pair.alsa == io->format) {
            pcm.format = pair.audiod;
            return 0;
        }
    }
    return -EINVAL;
}

int pcm_hw_free(snd_pcm_ioplug_t* io) {
    close_stream(pcm_of(io));
    return 0;
}

int pcm_sw_params(snd_pcm_ioplug_t* io, snd_pcm_sw_params_t* params) {
    AudiodPcm& pcm = pcm_of(io);
    snd_pcm_sw_params_get_avail_min(params, &pcm.avail_min);
    snd_pcm_sw_params_get_boundary(params, &pcm.boundary);
    pcm.avail_min = std::clamp<snd_pcm_uframes_t>(pcm.avail_min, 1, io->buffer_size);
    if (pcm.stream != nullptr) {
        audiod_stream_set_wakeup_frames(pcm.stream,
                                        static_cast<uint32_t>(pcm.avail_min + pcm.ring_extra));
    }
    refresh_poll(pcm);
    return 0;
}

int pcm_prepare(snd_pcm_ioplug_t* io) {
    AudiodPcm& pcm = pcm_of(io);
    // A stream that was written to holds frames ALSA has forgotten; a
    // capture starts recording only at start.
    if (pcm.capture) {
        close_stream(pcm);
    } else if (pcm.written) {
        discard_queued(pcm);
    }
    int rc = 0;
    if (pcm.stream == nullptr && !pcm.capture) {
        rc = open_stream(pcm);
    }
    refresh_poll(pcm);
    return rc;
}

int pcm_start(snd_pcm_ioplug_t* io) {
    AudiodPcm& pcm = pcm_of(io);
    if (pcm.capture) {
        const int opened = pcm.stream == nullptr ? open_stream(pcm) : 0;
        refresh_poll(pcm);
        return opened;
    }
    const int rc = pcm.stream != nullptr ? audiod_stream_start(pcm.stream) : AUDIOD_E_BADSTATE;
    refresh_poll(pcm);
    return rc == 0 ? 0 : to_errno(rc);
}

// Drop: what is queued must not play.
int pcm_stop(snd_pcm_ioplug_t* io) {
    AudiodPcm& pcm = pcm_of(io);
    if (pcm.capture) {
        close_stream(pcm);
    } else {
        discard_queued(pcm);
    }
    refresh_poll(pcm);
    return 0;
}

snd_pcm_sframes_t pcm_pointer(snd_pcm_ioplug_t* io) {
    AudiodPcm& pcm = pcm_of(io);
    audiod_stream_timing timing{};
    if (pcm.stream == nullptr || audiod_stream_get_timing(pcm.stream, &timing) != 0) {
        return 0;
    }
    // The "hardware" position: what the server consumed, or (capture) wrote,
    // since the last prepare. Right after a flush the server may not have
    // caught up with it yet: no progress until it has.
    const uint64_t boundary = pcm.boundary > 0 ? pcm.boundary : io->buffer_size;
    const uint64_t position = pcm.capture ? timing.written : timing.consumed;
    return static_cast<snd_pcm_sframes_t>((position > pcm.base ? position - pcm.base : 0) %
                                          boundary);
}

snd_pcm_sframes_t pcm_transfer(snd_pcm_ioplug_t* io, const snd_pcm_channel_area_t* areas,
                               snd_pcm_uframes_t offset, snd_pcm_uframes_t size) {
    AudiodPcm& pcm = pcm_of(io);
    if (pcm.stream == nullptr) {
        return -EBADFD;
    }
    // Interleaved access only: channel 0's area walks whole frames.
    auto* frames =
        static_cast<uint8_t*>(areas[0].addr) + (areas[0].first + offset * areas[0].step) / 8;
    const long taken = pcm.capture ? audiod_stream_read(pcm.stream, frames, size, 0)
                                   : audiod_stream_write(pcm.stream, frames, size, 0);
    if (taken > 0) {
        pcm.written = true;
    }
    after_transfer(pcm);
    if (taken == AUDIOD_E_AGAIN) {
        return 0;
    }
    return taken >= 0 ? taken : to_errno(static_cast<int>(taken));
}

int pcm_delay(snd_pcm_ioplug_t* io, snd_pcm_sframes_t* delay) {
    AudiodPcm& pcm = pcm_of(io);
    audiod_stream_timing timing{};
    *delay = 0;
    if (pcm.stream != nullptr && audiod_stream_get_timing(pcm.stream, &timing) == 0) {
        *delay = static_cast<snd_pcm_sframes_t>(timing.delay_frames);
    }
    return 0;
}

int pcm_drain(snd_pcm_ioplug_t* io) {
    AudiodPcm& pcm = pcm_of(io);
    if (pcm.stream == nullptr || pcm.capture) {
        return 0;
    }
    const int rc = audiod_stream_drain(pcm.stream, -1);
    return rc == 0 ? 0 : to_errno(rc);
}

int pcm_pause(snd_pcm_ioplug_t* io, int enable) {
    AudiodPcm& pcm = pcm_of(io);
    if (pcm.stream == nullptr) {
        return -EBADFD;
    }
    const int rc =
        enable != 0 ? audiod_stream_pause(pcm.stream, -1) : audiod_stream_resume(pcm.stream, -1);
    if (rc == 0) {
        pcm.paused = enable != 0;
    }
    return rc == 0 ? 0 : to_errno(rc);
}

int pcm_poll_revents(snd_pcm_ioplug_t* io, struct pollfd*, unsigned int, unsigned short* revents) {
    AudiodPcm& pcm = pcm_of(io);
    watch_stream_fd(pcm); // no system call unless the stream was re-bound
    // Ready: whatever made the descriptor readable stays so, as a level
    // should, until the program acts (no system call). Not ready: the
    // descriptor is cleared, so that the next poll waits.
    bool ready = poll_ready(pcm);
    if (!ready) {
        refresh_poll(pcm);
        ready = pcm.ready_signalled;
    }
    const unsigned short direction = pcm.capture ? POLLIN : POLLOUT;
    const bool flowing = io->state == SND_PCM_STATE_PREPARED ||
                         io->state == SND_PCM_STATE_RUNNING ||
                         io->state == SND_PCM_STATE_DRAINING || io->state == SND_PCM_STATE_PAUSED;
    *revents = ready ? static_cast<unsigned short>(direction | (flowing ? 0 : POLLERR)) : 0;
    return 0;
}

int pcm_close(snd_pcm_ioplug_t* io) {
    AudiodPcm* pcm = &pcm_of(io);
    close_stream(*pcm);
    audiod_disconnect(pcm->context);
    if (pcm->epoll >= 0) {
        ::close(pcm->epoll);
    }
    if (pcm->timer >= 0) {
        ::close(pcm->timer);
    }
    if (pcm->ready >= 0) {
        ::close(pcm->ready);
    }
    delete pcm;
    return 0;
}

const snd_pcm_ioplug_callback_t kCallbacks = [] {
    snd_pcm_ioplug_callback_t c{};
    c.start = pcm_start;
    c.stop = pcm_stop;
    c.pointer = pcm_pointer;
    c.transfer = pcm_transfer;
    c.close = pcm_close;
    c.hw_params = pcm_hw_params;
    c.hw_free = pcm_hw_free;
    c.sw_params = pcm_sw_params;
    c.prepare = pcm_prepare;
    c.drain = pcm_drain;
    c.pause = pcm_pause;
    c.poll_revents = pcm_poll_revents;
    c.delay = pcm_delay;
    return c;
}();

// What the server takes: every format above, 8-192 kHz, 1-8 channels.
int constrain(AudiodPcm& pcm) {
    snd_pcm_ioplug_t* io = &pcm.io;
    static const unsigned accesses[] = {SND_PCM_ACCESS_RW_INTERLEAVED,
                                        SND_PCM_ACCESS_MMAP_INTERLEAVED};
    unsigned formats[std::size(kFormats)];
    for (size_t i = 0; i < std::size(kFormats); ++i) {
        formats[i] = static_cast<unsigned>(kFormats[i].alsa);
    }
    const auto max_buffer_bytes =
        static_cast<unsigned>(static_cast<uint64_t>(pcm.max_buffer_ms) * kReferenceBytesPerMs);
    int err = snd_pcm_ioplug_set_param_list(io, SND_PCM_IOPLUG_HW_ACCESS, 2, accesses);
    err = err < 0
              ? err
              : snd_pcm_ioplug_set_param_list(io, SND_PCM_IOPLUG_HW_FORMAT,
                                              static_cast<unsigned>(std::size(formats)), formats);
    err = err < 0 ? err : snd_pcm_ioplug_set_param_minmax(io, SND_PCM_IOPLUG_HW_CHANNELS, 1, 8);
    err = err < 0 ? err
                  : snd_pcm_ioplug_set_param_minmax(io, SND_PCM_IOPLUG_HW_RATE, AUDIOD_MIN_RATE,
                                                    AUDIOD_MAX_RATE);
    err = err < 0 ? err
                  : snd_pcm_ioplug_set_param_minmax(io, SND_PCM_IOPLUG_HW_PERIOD_BYTES, 128,
                                                    max_buffer_bytes / 2);
    err = err < 0 ? err
                  : snd_pcm_ioplug_set_param_minmax(io, SND_PCM_IOPLUG_HW_BUFFER_BYTES, 256,
                                                    max_buffer_bytes);
    err = err < 0 ? err : snd_pcm_ioplug_set_param_minmax(io, SND_PCM_IOPLUG_HW_PERIODS, 2, 1024);
    return err;
}

int open_pcm(snd_pcm_t** pcmp, const char* name, snd_config_t* conf, snd_pcm_stream_t stream,
             int mode) {
    auto* pcm = new (std::nothrow) AudiodPcm;
    if (pcm == nullptr) {
        return -ENOMEM;
    }
    pcm->capture = stream == SND_PCM_STREAM_CAPTURE;
    pcm->io.private_data = pcm; // pcm_close finds it there on every path
    int err = audiod::alsa_plugin::read_fields(conf, {{"sink", &pcm->sink}, {"app", &pcm->app}},
                                               {{"max_buffer_ms", &pcm->max_buffer_ms}});
    if (err == 0 && (pcm->max_buffer_ms < 10 || pcm->max_buffer_ms > long{kMaxLatencyMs})) {
        SNDERR("audiod: max_buffer_ms is %ld; it must be 10 to %u", pcm->max_buffer_ms,
               AUDIOD_MAX_LATENCY_MS);
        err = -EINVAL;
    }
    if (err < 0) {
        pcm_close(&pcm->io);
        return err;
    }
    pcm->epoll = epoll_create1(EPOLL_CLOEXEC);
    pcm->timer = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
    pcm->ready = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
    const auto watch = [&](int fd) {
        epoll_event event{};
        event.events = EPOLLIN;
        event.data.fd = fd;
        return epoll_ctl(pcm->epoll, EPOLL_CTL_ADD, fd, &event) == 0;
    };
    itimerspec every{};
    every.it_interval.tv_nsec = kFallbackNs;
    every.it_value.tv_nsec = kFallbackNs;
    if (pcm->epoll < 0 || pcm->timer < 0 || pcm->ready < 0 || !watch(pcm->timer) ||
        !watch(pcm->ready) || timerfd_settime(pcm->timer, 0, &every, nullptr) != 0) {
        err = -errno;
        pcm_close(&pcm->io);
        return err;
    }
    const int rc = audiod_connect(pcm->app.empty() ? nullptr : pcm->app.c_str(), -1, &pcm->context);
    if (rc != 0) {
        SNDERR("audiod: cannot connect to the audiod server: %s", audiod_strerror(rc));
        pcm->context = nullptr;
        pcm_close(&pcm->io);
        return to_errno(rc);
    }
    pcm->io.version = SND_PCM_IOPLUG_VERSION;
    pcm->io.name = "audiod sound server";
    pcm->io.callback = &kCallbacks;
    pcm->io.poll_fd = pcm->epoll;
    pcm->io.poll_events = POLLIN;
    pcm->io.mmap_rw = 0;
    pcm->io.flags = SND_PCM_IOPLUG_FLAG_BOUNDARY_WA | SND_PCM_IOPLUG_FLAG_MONOTONIC;
    err = snd_pcm_ioplug_create(&pcm->io, name, stream, mode);
    if (err < 0) {
        pcm_close(&pcm->io);
        return err;
    }
    if ((err = constrain(*pcm)) < 0) {
        snd_pcm_ioplug_delete(&pcm->io); // calls pcm_close
        return err;
    }
    *pcmp = pcm->io.pcm;
    return 0;
}

} // namespace

extern "C" SND_PCM_PLUGIN_DEFINE_FUNC(audiod) {
    (void)root;
    return open_pcm(pcmp, name, conf, stream, mode);
}

// In a block, so that C++ reads it as a definition, not a declaration.
extern "C" {
SND_PCM_PLUGIN_SYMBOL(audiod)
}
