/*
 * libaudiod — the client library of the audiod sound server.
 *
 * A player connects once (audiod_connect), creates a stream for each output
 * it plays (audiod_stream_create) and writes interleaved frames into it; a
 * recorder creates a record stream (AUDIOD_STREAM_RECORD) and reads. Audio
 * travels through a lock-free ring in shared memory that the server reads
 * (or fills) on its own clock; the socket carries only control requests.
 *
 * Blocking. Every call that can wait takes a timeout in milliseconds and never
 * waits longer than that (plus scheduling noise): 0 means "do not wait", a
 * negative value means "the library's default", which is
 * AUDIOD_DEFAULT_TIMEOUT_MS (2 s) for connecting and creating streams, 500 ms
 * for requests on a stream (pause, resume, volume, close), and, for
 * audiod_stream_write and audiod_stream_drain, as long as it takes to
 * consume the data at the stream's nominal rate plus
 * AUDIOD_DEFAULT_TIMEOUT_MS. No call waits forever. A stalled or dead
 * server does not make any of them wait longer: streams keep their own
 * clock (see AUDIOD_STREAM_NO_KEEP_CLOCK).
 *
 * Errors. Functions return 0 (or a non-negative count) on success and a
 * negative AUDIOD_E_* code on failure; audiod_strerror() turns a code into
 * text, and audiod_last_error() gives the server's own message for the last
 * request that failed on a context.
 *
 * Threads. A context and its streams may be used from several threads, but
 * one stream must not be written from two threads at once. Requests to the
 * server (create, pause, resume, close, volume) are serialised per context.
 *
 * Socket. The server's control socket is $AUDIOD_SOCKET if set, else
 * $XDG_RUNTIME_DIR/audiod/socket, else /tmp/audiod-$UID/socket.
 */
#ifndef AUDIOD_AUDIOD_H
#define AUDIOD_AUDIOD_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/** Version of this library, as "MAJOR.MINOR.PATCH". */
const char* audiod_version(void);

/* ---- errors ------------------------------------------------------------ */

enum audiod_error {
    AUDIOD_OK = 0,
    AUDIOD_E_INVALID = -1,      /**< an argument is out of range or NULL */
    AUDIOD_E_NOSERVER = -2,     /**< no server is listening on the socket */
    AUDIOD_E_TIMEOUT = -3,      /**< the call's deadline passed */
    AUDIOD_E_PROTOCOL = -4,     /**< the server sent something this library does not understand */
    AUDIOD_E_DISCONNECTED = -5, /**< the connection to the server was lost */
    AUDIOD_E_NOTSUPPORTED = -6, /**< format, rate or channel count not supported */
    AUDIOD_E_NOENTITY = -7,     /**< no such sink or stream */
    AUDIOD_E_NOMEM = -8,        /**< out of memory */
    AUDIOD_E_BUSY = -9,         /**< the server is too busy to take the request now */
    AUDIOD_E_AGAIN = -10,       /**< the call would have to wait and was told not to */
    AUDIOD_E_SYSTEM = -11,      /**< a system call failed (see errno) */
    AUDIOD_E_BADSTATE = -12,    /**< the stream is in a state that does not allow this */
    AUDIOD_E_REFUSED = -13,     /**< the server refused the request (see audiod_last_error) */
    AUDIOD_E_VERSION = -14,     /**< the server speaks an incompatible protocol version */
    AUDIOD_E_STALLED = -15,     /**< the server stopped responding (streams without keep-clock) */
    AUDIOD_E_DENIED =
        -16, /**< not permitted for this user (the socket, or another user's stream) */
    AUDIOD_E_KILLED = -17, /**< the server's user ended this client (audioctl kill-client) */
};

/** Text for an AUDIOD_E_* code (or for 0). Never NULL; the string is static. */
const char* audiod_strerror(int code);

/* ---- sample formats ---------------------------------------------------- */

/** Sample formats. Frames are interleaved, little-endian. */
enum audiod_format {
    AUDIOD_FORMAT_INVALID = 0,
    AUDIOD_FORMAT_U8 = 1,
    AUDIOD_FORMAT_S16LE = 2,
    AUDIOD_FORMAT_S24LE = 3,   /**< 24-bit samples in the low bits of 32-bit containers */
    AUDIOD_FORMAT_S24_3LE = 4, /**< packed 24-bit samples, 3 bytes each */
    AUDIOD_FORMAT_S32LE = 5,
    AUDIOD_FORMAT_F32LE = 6, /**< float, full scale is [-1.0, 1.0] */
};

/** Name of a format ("s16le", ...), or "invalid". */
const char* audiod_format_name(int format);

/** Format from its name ("s16le", "s16", "f32le", "float", ...), or AUDIOD_FORMAT_INVALID. */
int audiod_format_from_name(const char* name);

/** Bytes per sample of a format, or 0 for an invalid one. */
unsigned audiod_format_sample_bytes(int format);

/* ---- connection -------------------------------------------------------- */

typedef struct audiod_context audiod_context;
typedef struct audiod_stream audiod_stream;

/** Default deadline for requests to the server, in milliseconds. */
#define AUDIOD_DEFAULT_TIMEOUT_MS 2000

/**
 * Connects to the server.
 * app_name: the application name the server files this client's streams
 *   under (per-application volume); NULL uses the executable's name.
 * timeout_ms: how long to wait for the server's greeting (negative: default).
 * May block up to timeout_ms. On success stores a new context in *out.
 */
int audiod_connect(const char* app_name, int timeout_ms, audiod_context** out);

/**
 * Closes the connection, closing any stream still open on it. Never blocks
 * for longer than AUDIOD_DEFAULT_TIMEOUT_MS. ctx may be NULL.
 */
void audiod_disconnect(audiod_context* ctx);

/**
 * The server's rate and channel count (what its sinks run at unless they
 * set their own). Streams in this format, as s16le or f32le, need no
 * conversion. Never blocks.
 */
int audiod_server_format(const audiod_context* ctx, uint32_t* rate, uint32_t* channels);

/**
 * The server's message for the last request that failed on ctx (empty if
 * none). The string is valid until the next request on ctx.
 */
const char* audiod_last_error(const audiod_context* ctx);

/* ---- streams ----------------------------------------------------------- */

/**
 * Stream flags.
 *
 * By default a stream KEEPS ITS CLOCK when the server stalls (its heartbeat
 * in shared memory stands still for 500 ms) or goes away (the socket hangs
 * up): writes are still accepted and consumed at the stream's nominal rate,
 * position and delay keep advancing, pause and resume still work, so the
 * player's timeline never freezes. The library reconnects in the background;
 * when a server answers again — the same one resumed or a new one — the
 * stream is re-created (on the sink it asked for, else the default) and
 * sound resumes within about a second, with nothing asked of the player.
 * audiod_stream_get_timing() says whether the clock is being kept.
 *
 * AUDIOD_STREAM_NO_KEEP_CLOCK turns that off: calls on the stream then fail
 * with AUDIOD_E_DISCONNECTED (server gone) or AUDIOD_E_STALLED (server not
 * responding) and the stream must be closed.
 */
#define AUDIOD_STREAM_NO_KEEP_CLOCK 0x1u

/**
 * AUDIOD_STREAM_MANUAL_START: the server starts playing the stream only when
 * audiod_stream_start() or audiod_stream_drain() is called (or when its
 * buffer is completely full), instead of once half the buffer is queued.
 * For players with their own start threshold, like ALSA programs.
 */
#define AUDIOD_STREAM_MANUAL_START 0x2u

/**
 * AUDIOD_STREAM_RECORD: a record stream. The server writes audio from a
 * source into the stream and the player reads it with audiod_stream_read().
 * `sink` in the parameters then names a source ("SINK.monitor": exactly
 * what that sink plays; NULL/"": the default sink's monitor). Keep-clock
 * works the same way: while no server records, reads deliver silence at the
 * nominal rate. A reader that falls behind loses the oldest audio it had no
 * room for (counted in the timing's `underruns`: a record stream's overruns),
 * and nobody else is affected.
 */
#define AUDIOD_STREAM_RECORD 0x4u

/** The limits of a stream, and of a sink's or source's own format. */
#define AUDIOD_MIN_RATE 8000u
#define AUDIOD_MAX_RATE 192000u
#define AUDIOD_MAX_CHANNELS 8u
/** The longest buffer a stream may ask for. */
#define AUDIOD_MAX_LATENCY_MS 10000u

/** What a new stream carries and where it goes (a record stream: what it
 * asks for and where it records from). */
typedef struct audiod_stream_params {
    int format;          /**< an AUDIOD_FORMAT_*: every one is accepted */
    uint32_t rate;       /**< frames per second, AUDIOD_MIN_RATE..AUDIOD_MAX_RATE;
                              the server resamples */
    uint32_t channels;   /**< 1..AUDIOD_MAX_CHANNELS, in the standard channel orders; the
                              server mixes them up or down (doc/formats.md) */
    uint32_t latency_ms; /**< buffer length to keep queued (record: to hold);
                              0 = default (100 ms), at most AUDIOD_MAX_LATENCY_MS */
    const char* sink;    /**< sink name (record streams: source name), or NULL/"" for the
                              default */
    float volume;        /**< initial linear gain, 1.0 = unity; negative = unity */
    uint32_t flags;      /**< AUDIOD_STREAM_* flags; 0 = defaults */
} audiod_stream_params;

/**
 * Fills params with defaults: s16le, 48000 Hz, 2 channels, 100 ms, default
 * sink, unity gain, keep-clock on.
 */
void audiod_stream_params_init(audiod_stream_params* params);

/**
 * Creates a stream: playback, or with AUDIOD_STREAM_RECORD a record stream.
 * May block up to AUDIOD_DEFAULT_TIMEOUT_MS.
 * AUDIOD_E_NOTSUPPORTED if the rate or channel count is out of range;
 * AUDIOD_E_NOENTITY if the named sink does not exist.
 */
int audiod_stream_create(audiod_context* ctx, const audiod_stream_params* params,
                         audiod_stream** out);

/** The server's id for the stream (the one audioctl shows). */
uint32_t audiod_stream_id(const audiod_stream* stream);

/** Size of the stream's buffer in frames. */
uint32_t audiod_stream_buffer_frames(const audiod_stream* stream);

/**
 * Writes up to `frames` interleaved frames. Returns how many frames were
 * taken (possibly fewer than asked if the deadline passed), or a negative
 * error. Waits for buffer space for at most timeout_ms; with timeout 0 it
 * never waits and returns AUDIOD_E_AGAIN when the buffer is full. Unless
 * the program has taken audiod_stream_fd(), a write that waits times its
 * own wake-up from the server's cycles (just after the one that frees the
 * space), so the server need not signal it every cycle.
 */
long audiod_stream_write(audiod_stream* stream, const void* data, size_t frames, int timeout_ms);

/**
 * Starts playing what is queued now, without waiting for the buffer to
 * fill (see AUDIOD_STREAM_MANUAL_START). Never blocks.
 */
int audiod_stream_start(audiod_stream* stream);

/**
 * Reads up to `frames` interleaved frames from a record stream. Returns how
 * many were read (possibly fewer than asked if the deadline passed), or a
 * negative error. Waits for audio for at most timeout_ms (negative: the
 * duration asked for plus AUDIOD_DEFAULT_TIMEOUT_MS); with timeout 0 it
 * never waits and returns AUDIOD_E_AGAIN when nothing is ready.
 * AUDIOD_E_BADSTATE on a playback stream.
 */
long audiod_stream_read(audiod_stream* stream, void* data, size_t frames, int timeout_ms);

/** How many frames a record stream has ready to read now. Never blocks. */
long audiod_stream_readable(const audiod_stream* stream);

/** How many frames can be written right now without waiting. Never blocks. */
long audiod_stream_writable(const audiod_stream* stream);

/**
 * A file descriptor that becomes readable when the stream has room for at
 * least its wake-up threshold of frames (half the buffer by default) or has
 * played everything it had; for a record stream, when at least the
 * threshold of frames is ready (a quarter of the buffer by default). Use it
 * with poll(2), then call audiod_stream_ack_wakeup() before writing or
 * reading. Valid until the stream is closed.
 */
int audiod_stream_fd(const audiod_stream* stream);

/** Clears the wake-up signalled on audiod_stream_fd(). Never blocks. */
void audiod_stream_ack_wakeup(audiod_stream* stream);

/**
 * For a program that polls audiod_stream_fd() beside a timer of its own,
 * before each wait for room in a playback stream: sets *at_ns to the
 * CLOCK_MONOTONIC time (ns) just after the server's cycle that will have
 * freed the stream's wake-up threshold (or left less than two cycles'
 * worth queued), for the program's timer. Until the next call, the server
 * then signals the descriptor only when the stream is about to run dry or
 * has: signalling a process every cycle costs the server more than mixing
 * it. *at_ns = 0 when the cycles cannot be foreseen (the stream not
 * started, paused or moving, the server stalled or gone): wait for the
 * descriptor, which is then signalled as usual. Reads shared memory only;
 * never blocks. AUDIOD_E_BADSTATE for a record stream.
 */
int audiod_stream_next_wakeup(audiod_stream* stream, uint64_t* at_ns);

/**
 * Changes each time the library puts a new server's eventfd behind
 * audiod_stream_fd() (the stream re-bound to a restarted server): the
 * descriptor's number stays, so poll(2) needs nothing, but an epoll(7) set
 * knows a descriptor by its open file and still watches the old one (or,
 * once that is closed, nothing). A program that keeps the descriptor in an
 * epoll set adds it again when this value changes. Reads memory only.
 */
unsigned audiod_stream_fd_generation(const audiod_stream* stream);

/**
 * Sets the threshold (frames of free space; record streams: frames ready) at
 * which the server wakes the client. Never blocks. A playback stream is also
 * woken whenever what it has queued falls below two of the server's cycles,
 * whatever its threshold (default: half the buffer).
 */
int audiod_stream_set_wakeup_frames(audiod_stream* stream, uint32_t frames);

/**
 * Waits until everything written has been played (consumed by the sink and
 * through the sink's own latency). Returns AUDIOD_E_TIMEOUT after timeout_ms
 * (negative: the buffered duration plus AUDIOD_DEFAULT_TIMEOUT_MS).
 */
int audiod_stream_drain(audiod_stream* stream, int timeout_ms);

/**
 * Pauses the stream (playing or recording); buffered frames stay buffered. Blocks up to timeout_ms
 * (negative: 500 ms). With keep-clock, a server that does not answer in
 * time is not an error: the pause applies at once to the kept clock and to
 * the server when it is back.
 */
int audiod_stream_pause(audiod_stream* stream, int timeout_ms);

/** Resumes a paused stream. Blocks like audiod_stream_pause(). */
int audiod_stream_resume(audiod_stream* stream, int timeout_ms);

/**
 * Discards everything written to a playback stream and not played yet, and
 * keeps the stream: its id, sink, volume and pause state stay, and its
 * counters go on from where they were (what was discarded counts as
 * consumed). The stream then starts again as a new one does: once enough is
 * queued, or at audiod_stream_start() with AUDIOD_STREAM_MANUAL_START. For a
 * player's seek. Must not be called while another thread writes the stream.
 * Blocks up to timeout_ms (negative: 500 ms), until the room is free to
 * write; with keep-clock a server that does not answer is not an error.
 * AUDIOD_E_BADSTATE on a record stream.
 */
int audiod_stream_flush(audiod_stream* stream, int timeout_ms);

/** Sets the stream's own linear gain (1.0 = unity). Blocks like audiod_stream_pause(). */
int audiod_stream_set_volume(audiod_stream* stream, float volume, int timeout_ms);

/** Timing of a stream, read from shared memory without a round trip. */
typedef struct audiod_stream_timing {
    uint64_t written;      /**< frames written by the client so far */
    uint64_t consumed;     /**< frames the server has taken out of the buffer */
    uint64_t played;       /**< frames played out: consumed minus the sink's latency */
    uint64_t delay_frames; /**< frames between the next write and the speaker */
    uint64_t
        sink_start_frame; /**< sink frame at which the stream's first frame played, or UINT64_MAX */
    uint64_t underruns;   /**< cycles in which the server found the buffer short */
    uint32_t rate;        /**< the stream's rate, to turn frames into time */
    int keeping_clock;    /**< 1 while no server plays the stream and the library keeps time */
} audiod_stream_timing;

/** Fills *timing. Never blocks. */
int audiod_stream_get_timing(const audiod_stream* stream, audiod_stream_timing* timing);

/**
 * Closes the stream and frees it: frames not yet played are dropped (call
 * audiod_stream_drain first to hear them). Blocks up to 500 ms, and not at
 * all while the stream keeps its own clock. stream may be NULL.
 */
int audiod_stream_close(audiod_stream* stream);

/* ---- real-time scheduling ---------------------------------------------- */

/** The priority audiod_make_thread_realtime(0) asks for: below the server's
 * default (20), so that the server's cycle comes before its clients'. */
#define AUDIOD_CLIENT_RT_PRIORITY 15

/**
 * Makes the calling thread real-time (SCHED_FIFO, reset on fork), for the
 * thread that feeds a stream with a short buffer: a normal thread is held
 * up by whatever else runs and underruns. priority: 1..99, or 0 for
 * AUDIOD_CLIENT_RT_PRIORITY. The kernel allows it to root, and to anyone up
 * to their RLIMIT_RTPRIO (e.g. the `audio` group's `rtprio` in
 * /etc/security/limits.d; see audiod(8), REAL-TIME SCHEDULING); no rtkit or D-Bus is involved.
 * Where the limit is lower than asked but above 0, the limit is used.
 * Returns the priority in force (> 0), AUDIOD_E_REFUSED if the system
 * permits none (the thread stays as it was), or AUDIOD_E_INVALID. Never
 * blocks. A real-time thread must not spin: it would starve the rest of its
 * core.
 */
int audiod_make_thread_realtime(int priority);

/* ---- events ------------------------------------------------------------ */

/** What an event is about. */
enum audiod_event_kind {
    AUDIOD_EVENT_OTHER = 0, /**< a kind this library does not know yet */
    AUDIOD_EVENT_STREAM_ADDED = 1,
    AUDIOD_EVENT_STREAM_REMOVED = 2,
    AUDIOD_EVENT_STREAM_MOVED = 3,   /**< sink = where to, previous_sink = where from */
    AUDIOD_EVENT_STREAM_CHANGED = 4, /**< volume, mute or state */
    AUDIOD_EVENT_SINK_ADDED = 5,
    AUDIOD_EVENT_SINK_REMOVED = 6,
    AUDIOD_EVENT_SINK_CHANGED = 7,    /**< volume, mute or state */
    AUDIOD_EVENT_DEFAULT_CHANGED = 8, /**< sink = the new default, previous_sink = the old one */
    AUDIOD_EVENT_APP_CHANGED = 9,     /**< an application's volume or mute */
    AUDIOD_EVENT_SOURCE_ADDED = 10,   /**< a capture source (or network session) */
    AUDIOD_EVENT_SOURCE_REMOVED = 11,
    AUDIOD_EVENT_SOURCE_CHANGED = 12, /**< state */
};

#define AUDIOD_NAME_MAX 72

/** One event. Strings are NUL-terminated and empty when not relevant. */
typedef struct audiod_event {
    int kind;           /**< an audiod_event_kind */
    char kind_name[32]; /**< the kind as the server named it, e.g. "stream-moved" */
    uint32_t stream_id; /**< stream events: the stream's id */
    char app[AUDIOD_NAME_MAX];
    char sink[AUDIOD_NAME_MAX];          /**< the device it is about: a sink, or for a record stream
                                              or a source event a source (the wire's `device`) */
    char previous_sink[AUDIOD_NAME_MAX]; /**< where it was, or the previous default */
    char state[32]; /**< stream-changed: starting, running, stalled, paused, moving,
                         draining, drained; sink-changed: running, stalled, failed */
    float volume;   /**< linear volume of the stream, application or sink */
    int muted;
} audiod_event;

/**
 * Asks the server to send events to this context from now on: streams and
 * sinks appearing, moving, changing volume or state, the default sink
 * changing. Read them with audiod_next_event() — promptly: a subscriber that
 * lets thousands of events pile up is disconnected. Blocks up to timeout_ms.
 */
int audiod_subscribe(audiod_context* ctx, int timeout_ms);

/**
 * A file descriptor that is readable when audiod_next_event() may have
 * something, for poll(2)/epoll. It stays valid until the context is closed.
 */
int audiod_context_fd(const audiod_context* ctx);

/**
 * Takes the next event without blocking. Returns 1 and fills *event, 0 if
 * there is none now, or a negative error (AUDIOD_E_DISCONNECTED ...).
 */
int audiod_next_event(audiod_context* ctx, audiod_event* event);

#ifdef __cplusplus
}
#endif

#endif /* AUDIOD_AUDIOD_H */
