#include "device/placement.h"

#include "device/device.h"

namespace audiod {

Placement::Action Placement::land_on(Device* to) {
    device_ = to;
    destination_ = nullptr;
    state_ = State::attached;
    if (returns_to == to->name()) {
        returns_to.clear(); // back where it was
    }
    return Action::land;
}

void Placement::remember_return(const Device& lost) {
    // The first device lost is where it goes back to: one lost after it
    // (the fallback failing too) was never where it belonged.
    if (returns_to.empty()) {
        returns_to = lost.name();
    }
}

Placement::Action Placement::apply(const Step& step) {
    // A stream no RT thread holds is changed at once.
    const bool held = state_ != State::parked && step.device_running;
    switch (step.change) {
    case Change::move:
        if (state_ == State::closing || destination() == step.to) {
            return Action::none;
        }
        if (state_ == State::moving) {
            destination_ = step.to; // not landed yet: it lands there instead
            return Action::none;
        }
        if (!held) {
            return land_on(step.to);
        }
        state_ = State::moving;
        destination_ = step.to;
        return Action::detach;

    case Change::handed_back:
        if (state_ == State::closing) {
            return Action::release;
        }
        if (state_ == State::moving) {
            return land_on(destination_);
        }
        return Action::none;

    case Change::close:
        if (state_ == State::closing) {
            return Action::none;
        }
        if (state_ == State::moving) {
            // The detach for the move is on its way; what it hands back is freed.
            state_ = State::closing;
            destination_ = nullptr;
            return Action::none;
        }
        state_ = State::closing;
        return held ? Action::detach : Action::release;

    case Change::rescue:
        if (state_ == State::moving && destination_ == step.leaving) {
            // On its way there: it lands somewhere that stays (where it is,
            // if nowhere else), and goes there when it is back.
            destination_ = step.to != nullptr ? step.to : device_;
            remember_return(*step.leaving);
        }
        if (device_ != step.leaving) {
            return Action::none;
        }
        if (state_ == State::closing) {
            return Action::release;
        }
        if (!pinned) {
            Device* to =
                state_ == State::moving && destination_ != step.leaving ? destination_ : step.to;
            if (to != nullptr && to != step.leaving) {
                land_on(to);
                remember_return(*step.leaving);
                return Action::land;
            }
        }
        // Pinned to its source, or nowhere to go: it waits, silent, on the
        // stopped device until that comes back or another appears.
        state_ = State::parked;
        destination_ = nullptr;
        return Action::none;

    case Change::replace:
        if (state_ == State::moving && destination_ == step.leaving) {
            destination_ = step.to;
        }
        if (device_ != step.leaving) {
            return Action::none;
        }
        if (state_ == State::closing) {
            return Action::release;
        }
        // A move away from the old device goes on to where it was going.
        return land_on(state_ == State::moving ? destination_ : step.to);
    }
    return Action::none;
}

const char* placement_state_name(Placement::State state) noexcept {
    switch (state) {
    case Placement::State::attached:
        return "attached";
    case Placement::State::moving:
        return "moving";
    case Placement::State::parked:
        return "parked";
    case Placement::State::closing:
        return "closing";
    }
    return "unknown";
}

} // namespace audiod
