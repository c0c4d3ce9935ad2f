// Fixed-size messages between the control thread and a sink's RT thread.
// They are plain data so that the SPSC queues carry them without allocating;
// a Stream travels as a pointer whose ownership stays with the control
// thread (see stream.h).
#pragma once

#include <cstdint>

namespace audiod {

struct Stream;

// Control -> RT.
struct RtCommand {
    enum class Kind : uint8_t {
        attach,      // start mixing `stream`
        detach,      // stop mixing `stream` and hand it back (RtEvent::detached)
        stream_gain, // ramp `stream` to `gain`
        pause,       // stop taking frames from `stream`
        resume,      // take frames again
        device_gain, // ramp the whole sink to `gain`
        flush,       // drop `stream`'s frames before `position`; wait for a start again
    };
    Kind kind{};
    Stream* stream = nullptr;
    float gain = 1.0f;
    uint64_t position = 0;
};

// RT -> control.
struct RtEvent {
    enum class Kind : uint8_t {
        detached,      // `stream` is no longer used by the RT thread
        broken,        // `stream`'s client corrupted its ring; it has been detached
        device_failed, // the device reported error `value` (negative errno); the RT thread stopped
    };
    Kind kind{};
    Stream* stream = nullptr;
    int64_t value = 0;
};

} // namespace audiod
