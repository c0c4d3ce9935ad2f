/*
 * The audiod module ABI: how the server loads sinks and sources from shared
 * objects.
 *
 * A module is a shared object in the server's module directory named
 * TYPE.so (null.so, file.so, alsa.so ...). It exports one C function,
 * audiod_module_entry(), returning a descriptor whose abi_version must equal
 * AUDIOD_MODULE_ABI_VERSION; the server refuses any other. Inside, a module
 * is ordinary C or C++; only this header crosses the boundary, and no C++
 * exception may cross it.
 *
 * Threads. Each sink and each source has a real-time thread of its own.
 * Functions marked "Thread: rt"
 * are called only on it, and must never allocate or free memory, take a lock
 * that another thread may hold, do file or network I/O that can block (hand
 * it to a thread of your own), log, or sleep — except that `wait` blocks
 * until the device (or the sink's clock) is ready for the next quantum,
 * which is what drives the cycle. Functions marked "Thread: control" run on
 * the server's control thread and may do anything, but should return
 * promptly.
 *
 * Required and optional. A module provides a sink, a source, or both: the
 * descriptor's `sink` and `source` tables may each be NULL, but not both.
 * In a table it provides, every function is required unless its comment
 * says "Optional"; the server checks them all when it loads the module and
 * refuses one that lacks any, with a message naming it, so a missing
 * function is found at load time and never called on the rt thread.
 *
 * Options. Each sink and source table lists the options it accepts
 * (audiod_option_spec), and its `open` refuses any other key: one list,
 * which the module checks and the manual (audiod.conf(5)) must agree with.
 *
 * Errors are negative errno values.
 */
#ifndef AUDIOD_MODULE_H
#define AUDIOD_MODULE_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/*
 * The ABI's versions; a module must have been built for the server's.
 *   8  control() on sinks.
 *   7  playout() on sources.
 *   6  media_time() on sinks and sources.
 *   5  each sink and source table lists its options (option_specs);
 *      audiod_sink_config and audiod_sink_info, which serve sources too,
 *      are audiod_device_config and audiod_open_info.
 *   4  audiod_host.request_source; audiod_module_devices().
 *   3  describe().
 *   2  sources (audiod_source_ops).
 */
#define AUDIOD_MODULE_ABI_VERSION 8u
#define AUDIOD_MODULE_ENTRY_SYMBOL "audiod_module_entry"

enum audiod_log_level {
    AUDIOD_LOG_ERROR = 0,
    AUDIOD_LOG_WARNING = 1,
    AUDIOD_LOG_INFO = 2,
    AUDIOD_LOG_DEBUG = 3,
};

/**
 * One `key = value` option from the device's configuration table
 * ([sinks.NAME] or [sources.NAME]).
 */
typedef struct audiod_option {
    const char* key;
    const char* value;
} audiod_option;

/** Services the server offers a module. */
typedef struct audiod_host {
    uint32_t abi_version;
    /** Logs one line "component: message". Thread: any except rt. */
    void (*log)(int level, const char* component, const char* message);
    /**
     * For a source that finds other sources by itself (an RTP source
     * listening to session announcements): asks the server to open a source
     * of the module's `type` named `name` with these options (`remove` = 0),
     * or to close one that `requester` (the asking source's name) had opened
     * this way (`remove` = 1; options ignored). The server copies
     * everything, acts on its control thread shortly after, and logs the
     * outcome; sources opened so close when their requester does.
     * Thread: any except rt. Since ABI 4.
     */
    void (*request_source)(const struct audiod_host* host, const char* requester, const char* type,
                           const char* name, const audiod_option* options, size_t option_count,
                           int remove);
    /** The server's own; modules pass the host back and leave this alone. */
    void* server;
} audiod_host;

/** What the server asks of a new device, sink or source. */
typedef struct audiod_device_config {
    const char* name; /**< the device's, from its configuration table */
    uint32_t rate;
    uint32_t channels;
    uint32_t quantum; /**< frames per cycle */
    const audiod_option* options;
    size_t option_count;
} audiod_device_config;

/**
 * What a device tells the server once opened. (Not "audiod_device_info":
 * that name is the device listing's, below.)
 */
typedef struct audiod_open_info {
    int format; /**< the AUDIOD_FORMAT_* a sink wants written, or a source's `read` delivers */
    /** frames between `write` and the listener, or between capture and `read` */
    uint32_t latency_frames;
} audiod_open_info;

/**
 * One option a sink or source accepts: a key of its configuration table
 * beside the server's own (type, rate, channels, quantum ...). Plain static
 * data, read by people and programs alike: the module's `open` refuses
 * keys its table lacks, and the manual must agree with the tables.
 * Every string is NUL-terminated; only `default_value` may be NULL.
 *
 * Why on the sink and source tables, not the descriptor: a module's two
 * directions often differ (the RTP sink takes a destination, its source
 * whom to allow), and the table of a direction sits beside the `open` that
 * reads it.
 */
typedef struct audiod_option_spec {
    const char* key; /**< "periods": lower-case words joined by '-' */
    /**
     * What the value is: "integer", "number" (decimal, "2.5"), "boolean"
     * (true or false), "enum" (one of `range`) or "string".
     */
    const char* type;
    /**
     * The value in force when the key is absent, as it would be written
     * ("3", "s32", "true"); NULL when there is none to write: the option is
     * required, or its default follows from other settings (`summary` says
     * which).
     */
    const char* default_value;
    /**
     * The values it takes: "LO..HI" for an integer or a number (inclusive),
     * "a|b|c" for an enum, "" where that does not apply or the limit
     * depends on other settings (`summary` says so).
     */
    const char* range;
    const char* summary; /**< one line: what it does, and anything above not said */
} audiod_option_spec;

typedef struct audiod_sink_ops {
    /**
     * Opens a sink. Unknown or invalid options must fail with a message in
     * `error` (NUL-terminated, at most error_size bytes), not be ignored:
     * the known ones are `option_specs`. Thread: control.
     */
    int (*open)(const audiod_host* host, const audiod_device_config* config, void** instance,
                audiod_open_info* info, char* error, size_t error_size);
    /** Called once on the rt thread before the first `wait`. Thread: rt. */
    int (*start)(void* instance);
    /**
     * Blocks until the sink wants the next quantum, for at most about two
     * quanta (one following another program's clock, as the jack sink does
     * JACK's, may give that program up to half a second more). Returns 0,
     * or a negative errno, which fails the sink (it is reopened once a
     * second): a late cycle the device recovers from is an xrun for
     * `xruns` to count, returned as 0. Thread: rt.
     */
    int (*wait)(void* instance);
    /** Takes exactly one quantum of frames in the sink's format. Thread: rt. */
    int (*write)(void* instance, const void* frames, uint32_t frame_count);
    /** Called once on the rt thread after the last `write`. Thread: rt. */
    void (*stop)(void* instance);
    /** Frees the instance; everything written must be flushed. Thread: control. */
    void (*close)(void* instance);
    /**
     * Xruns the sink itself has seen (late cycles, device underruns).
     * Optional: NULL means the sink keeps no count (shown as 0). Thread: any
     * (the control thread reads it while the rt thread runs).
     */
    uint64_t (*xruns)(void* instance);
    /**
     * What `audioctl list` shows of the device beyond the common fields, as
     * "key=value" lines ("destination=224.0.0.56:46000\npackets=1200\n"):
     * keys are lower-case words joined by '-', values one line. Writes at
     * most `size` bytes including a terminating NUL and returns the length
     * without it. Optional: NULL adds nothing. Thread: any (the control
     * thread calls it while the rt thread runs: read atomics only).
     */
    size_t (*describe)(void* instance, char* text, size_t size);
    /**
     * The options `open` accepts, `option_spec_count` of them, in the order
     * a manual would list them; NULL and 0 if it takes none. Since ABI 5.
     */
    const audiod_option_spec* option_specs;
    size_t option_spec_count;
    /**
     * When this cycle's first frame is heard, in CLOCK_MONOTONIC
     * nanoseconds: the time the device plays it (the deadline a sink paced
     * by a timer woke for, plus any delay of its own). Called after each
     * `wait` that returned 0, before `write`. Optional: NULL, and 0 for a
     * cycle it cannot tell, leave the server to take the time `wait`
     * returned plus `latency_frames`. Streams that must be heard at a given
     * time (a room of several in sync) are timed by it. Thread: rt. Since
     * ABI 6.
     */
    int64_t (*media_time)(void* instance);
    /**
     * A request of the sink's own at run time, as "key=value" lines: for
     * an rtp sink, what it asks of one of the rooms that receive it,
     * "room=NAME\nvolume=0.8\nmute=on\ndelay-ms=20\n" (any of the last
     * three; delay-ms=own: the room's own), or "room=NAME\nreset=yes\n".
     * Returns 0,
     * or a negative errno with a message in `error` (NUL-terminated, at
     * most error_size bytes). Optional: NULL refuses every request.
     * Thread: control. Since ABI 8.
     */
    int (*control)(void* instance, const char* request, char* error, size_t error_size);
} audiod_sink_ops;

/**
 * A source: a capture device. The same life cycle as a sink, on its own rt
 * thread, with `read` in place of `write`; audiod_device_config and
 * audiod_open_info describe it as they do a sink.
 */
/** A timed source's playout, as the server measures it (audiod_source_ops.playout). */
typedef struct audiod_playout {
    int timed;            /**< 1: played at the source's media times now */
    double sync_error_us; /**< how far off the last frame written will be heard; + late */
    uint64_t realigns;    /**< times it was cut back into step */
} audiod_playout;

typedef struct audiod_source_ops {
    /** Opens a source; options as for a sink. Thread: control. */
    int (*open)(const audiod_host* host, const audiod_device_config* config, void** instance,
                audiod_open_info* info, char* error, size_t error_size);
    /** Called once on the rt thread before the first `wait`. Thread: rt. */
    int (*start)(void* instance);
    /**
     * Blocks until a quantum has been captured, for at most about two
     * quanta. Returns 0, or a negative errno. Thread: rt.
     */
    int (*wait)(void* instance);
    /**
     * Delivers exactly one quantum of frames in the source's format (silence
     * for any it could not capture). Thread: rt.
     */
    int (*read)(void* instance, void* frames, uint32_t frame_count);
    /** Called once on the rt thread after the last `read`. Thread: rt. */
    void (*stop)(void* instance);
    /** Frees the instance. Thread: control. */
    void (*close)(void* instance);
    /**
     * Xruns the source has seen (device overruns). Optional, as for a sink.
     * Thread: any.
     */
    uint64_t (*xruns)(void* instance);
    /** Describes the source for `audioctl list`; optional, as for a sink. Thread: any. */
    size_t (*describe)(void* instance, char* text, size_t size);
    /** The options `open` accepts, as for a sink. Since ABI 5. */
    const audiod_option_spec* option_specs;
    size_t option_spec_count;
    /**
     * When this cycle's first frame is meant to be heard, in CLOCK_MONOTONIC
     * nanoseconds: for a network stream whose sender stamped its audio with
     * a shared clock, the time its sender means every listener to hear it
     * (its playout time). A source played into a sink is then heard at
     * those times, whatever lies between. Called after each `read` that
     * returned 0, about the frames it read. Optional: NULL, and 0 for a cycle it
     * cannot tell (a capture card; a sender not yet heard from), leave the
     * audio untimed: it plays a steady latency after it arrives.
     * Thread: rt. Since ABI 6.
     */
    int64_t (*media_time)(void* instance);
    /**
     * How the source's audio plays where the server plays it at its media
     * times (a network receiver played into a sink), about once a second:
     * for a receiver to tell its sender how its room is doing. Optional:
     * NULL. Thread: control. Since ABI 7.
     */
    void (*playout)(void* instance, const struct audiod_playout* playout);
} audiod_source_ops;

typedef struct audiod_module {
    uint32_t abi_version; /**< AUDIOD_MODULE_ABI_VERSION */
    const char* name;     /**< the type this module provides, e.g. "file" */
    const char* description;
    const audiod_sink_ops* sink;     /**< NULL if it provides no sink */
    const audiod_source_ops* source; /**< NULL if it provides no source (not both NULL) */
} audiod_module;

typedef const audiod_module* (*audiod_module_entry_fn)(void);

/**
 * Device discovery, for `audiod --list-devices`: a module that opens devices
 * by name may also export
 *
 *   int audiod_module_devices(audiod_device_fn emit, void* context,
 *                             char* error, size_t error_size);
 *
 * which calls `emit` once per device that its `device` option can name, and
 * returns 0, or a negative errno with a message in `error` (NUL-terminated,
 * at most error_size bytes). Optional: a module without it lists nothing.
 * The strings passed to `emit` live only until it returns. Thread: control
 * (never while the module's sinks run: the server calls it only when asked
 * to list devices and exit). Since ABI 4.
 */
typedef struct audiod_device_info {
    const char* api;            /**< how the module reaches it: "alsa", "jack", "oss" ... */
    const char* name;           /**< what the `device` option takes */
    const char* description;    /**< one line; may be "" */
    int index;                  /**< another way to name it (`device = "3"`), or -1 */
    int playback;               /**< 1 if it can play (a sink may open it) */
    int capture;                /**< 1 if it can record (a source may open it) */
    uint32_t playback_channels; /**< the most it takes; 0 if unknown */
    uint32_t capture_channels;
    uint32_t default_rate;      /**< Hz; 0 if unknown */
    double playback_latency_ms; /**< the device's default low latency; 0 if unknown */
    double capture_latency_ms;
} audiod_device_info;

typedef void (*audiod_device_fn)(void* context, const audiod_device_info* device);
typedef int (*audiod_module_devices_fn)(audiod_device_fn emit, void* context, char* error,
                                        size_t error_size);
#define AUDIOD_MODULE_DEVICES_SYMBOL "audiod_module_devices"

#ifdef __cplusplus
}
#endif

#endif /* AUDIOD_MODULE_H */
