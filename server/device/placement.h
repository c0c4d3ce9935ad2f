// Where a stream is, as the control thread sees it, and where it belongs.
//
// A stream is always on one device: a sink it plays into, or for a record
// stream a capture source or the sink whose monitor it records. Whether
// that device's RT thread holds it is the state:
//
//   attached --move--> moving --handed_back--> attached (on the destination)
//      |                 |
//    close             close
//      v                 v
//   closing --handed_back--> (released: freed by the engine)
//
//   parked: on a device whose RT thread has stopped (it failed, and the
//   stream had nowhere else to go or is pinned to it); no thread holds it,
//   so anything that happens to it happens at once.
//
// A move or close of a stream whose device's RT thread has stopped
// happens at once too: nothing is handed back by a thread that is gone.
// The RT thread lets go of a stream only at a cycle boundary, after every
// command queued for it; so until `handed_back`, nothing but the RT thread
// may touch the stream's `rt` block, and changes made meanwhile (volume,
// pause, flush) wait to apply until it lands.
//
// Every change of state goes through Placement::apply, the one place that
// says what a change does in each state and what the router must then do.
// Thread: control.
#pragma once

#include "protocol/ring_layout.h"

#include <cstdint>
#include <string>

namespace audiod {

class Device;

class Placement {
public:
    enum class State : uint8_t { attached, moving, parked, closing };

    enum class Change : uint8_t {
        move,        // to `to` (asked for, or going back where it belongs)
        handed_back, // its device's RT thread let go of it (RtEvent::detached)
        close,       // its client closed it, or is gone
        // The RT thread of `leaving` (where the stream is, or where it was
        // moving) has stopped for good: the stream is rescued to `to`, or
        // parked there if `to` is null or the stream is pinned; it will go
        // back to `leaving` (returns_to) when that comes back.
        rescue,
        // `leaving` was replaced by `to` (the same device reopened): the
        // stream lands on `to` as it was.
        replace,
    };

    // What the router does after a change.
    enum class Action : uint8_t {
        none,
        detach,  // queue a detach for `device`'s RT thread
        land,    // attach to `device`, set up for it (conversion, gain, pause)
        release, // free the stream: no thread holds it any more
    };

    struct Step {
        Change change;
        Device* to = nullptr;
        const Device* leaving = nullptr;
        // Whether `device`'s RT thread runs (it has not failed). A stream on a
        // device whose thread has stopped is changed at once.
        bool device_running = true;
    };

    // A new stream on `at`, attached from its first cycle.
    Placement() = default;
    explicit Placement(Device* at)
        : device_(at) {}

    // Applies one change and says what the router must do for it.
    [[nodiscard]] Action apply(const Step& step);

    [[nodiscard]] State state() const noexcept { return state_; }
    // The device it is on (while moving: the one it is leaving).
    [[nodiscard]] Device* device() const noexcept { return device_; }
    // Where it is going while moving, else where it is.
    [[nodiscard]] Device* destination() const noexcept {
        return state_ == State::moving ? destination_ : device_;
    }
    [[nodiscard]] bool moving() const noexcept { return state_ == State::moving; }
    [[nodiscard]] bool closing() const noexcept { return state_ == State::closing; }
    // Between devices or closing: no RT thread will take a command for it
    // (changes wait until it lands, or are moot).
    [[nodiscard]] bool in_transit() const noexcept { return moving() || closing(); }

    // Where it belongs when that device exists: the sink (or source) its
    // client asked for, its application's remembered sink, or where it was
    // last moved; "" for the default sink.
    std::string home;
    // A device that failed, stalled or went away under it (the first, if
    // its fallback went too): it goes back there when that device returns
    // (unless moved by hand meanwhile).
    std::string returns_to;
    // A relay's recording (engine/relays.h): it stays on its source, never
    // moved, and never rescued to a monitor (which would feed a sink its
    // own output).
    bool pinned = false;
    // A flush asked for while no RT thread could take it (kNoFrame: none);
    // it applies when the stream lands.
    uint64_t flush_on_landing = kNoFrame;

private:
    // Puts the stream on `to` as attached, done with any move.
    Action land_on(Device* to);
    void remember_return(const Device& lost);

    State state_ = State::attached;
    Device* device_ = nullptr;
    Device* destination_ = nullptr;
};

// "attached", "moving", ... for logs and tests.
[[nodiscard]] const char* placement_state_name(Placement::State state) noexcept;

} // namespace audiod
