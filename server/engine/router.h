// Where streams play and record: which device a new stream goes to, moves
// between devices while they play, and what happens to a device's streams
// when it fails, goes away, is replaced or comes back. Every change of a
// stream's placement goes through Placement::apply (device/placement.h);
// the router does what it says: queues a detach, lands the stream on its
// new device, or frees it.
//
// A move. The stream's device lets go of it at a cycle boundary (its RT
// thread hands it back: handed_back), then it lands on the destination,
// whose RT thread takes it at its next cycle. The ring's read position is
// part of the stream, so no frame is lost or repeated; the stream is
// silent for at most one quantum of each device. Its rate is converted
// for the new device as it lands.
//
// Failover. The streams of a device that fails or is unloaded are rescued
// to the default sink (a record stream: its monitor) and go back when the
// device returns; a stream created while its device is failed or stalled
// plays elsewhere and goes there when it is back. Thread: control.
#pragma once

#include "engine/announcer.h"
#include "engine/app_state.h"
#include "engine/client_error.h"
#include "engine/device_registry.h"
#include "engine/gains.h"
#include "engine/rt_command_queue.h"
#include "engine/stream_table.h"

#include <variant>

namespace audiod {

class Router {
public:
    Router(DeviceRegistry& devices, StreamTable& streams, RtCommandQueue& commands, Gains& gains,
           AppStateStore& state, Announcer& announcer, const ServerConfig& config);

    // Where a new stream goes: the device its client names, else its
    // application's remembered sink, else the default sink; elsewhere, for
    // now, if that one has failed or stalled.
    [[nodiscard]] std::variant<Placement, ClientError> place(const StreamRequest& request) const;
    // Sets up a new stream for its device and hands it to the RT thread.
    [[nodiscard]] MaybeError attach_new(Stream& stream);

    [[nodiscard]] MaybeError set_paused(Stream& stream, bool paused);
    // Drops what a playback stream queued before ring position `position`
    // (device/stream.h: flush_stream), wherever the stream is.
    [[nodiscard]] MaybeError flush(Stream& stream, uint64_t position);
    // The stream is freed once no RT thread holds it.
    void close(Stream& stream);
    // A stream, or every stream of an application, to a sink (record
    // streams: to a source or SINK.monitor); an application remembers it.
    [[nodiscard]] MaybeError move(const proto::MoveStream& request);

    // The RT thread of the stream's device let go of it.
    void handed_back(Stream& stream);
    // Takes every stream off `leaving`, whose RT thread has stopped.
    void rescue_from(Device& leaving);
    // Lands the streams of `old` (its RT thread stopped) on `fresh`, the
    // same device reopened.
    void replace(Device& old, Device& fresh);
    // Moves to `arrived` the streams that belong there.
    void bring_back(Device& arrived);

private:
    // Applies one placement change and does what it says; returns what that was.
    Placement::Action change(Stream& stream, const Placement::Step& step);
    void move_to(Stream& stream, Device& destination);
    // Sets a stream up for the device it has just landed on and attaches it.
    void land(Stream& stream);
    void release(Stream& stream);

    DeviceRegistry& devices_;
    StreamTable& streams_;
    RtCommandQueue& commands_;
    Gains& gains_;
    AppStateStore& state_;
    Announcer& announcer_;
    const ServerConfig& config_;
};

} // namespace audiod
