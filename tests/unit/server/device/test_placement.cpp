// Every transition of a stream's placement (device/placement.h), and what
// each tells the router to do. The devices are real (stepped sinks, never
// cycled): a placement only points at them and reads their names.
#include "device/placement.h"
#include "unit/server/stepped_sink.h"

#include <boost/test/unit_test.hpp>

using namespace audiod;
using namespace audiod::test;
using State = Placement::State;
using Change = Placement::Change;
using Action = Placement::Action;

namespace {

struct Devices {
    SinkRig a{{48000, 2, 64}, "s16le", "a"};
    SinkRig b{{48000, 2, 64}, "s16le", "b"};
    SinkRig c{{48000, 2, 64}, "s16le", "c"};
    Device& A() { return *a.sink; }
    Device& B() { return *b.sink; }
    Device& C() { return *c.sink; }
};

} // namespace

BOOST_AUTO_TEST_SUITE(placement)

BOOST_AUTO_TEST_CASE(a_move_detaches_then_lands_on_the_destination) {
    Devices d;
    Placement p(&d.A());
    BOOST_CHECK(p.apply({Change::move, &d.B()}) == Action::detach);
    BOOST_CHECK(p.state() == State::moving);
    BOOST_CHECK(p.device() == &d.A()); // its RT thread still holds it
    BOOST_CHECK(p.destination() == &d.B());
    BOOST_CHECK(p.in_transit());
    BOOST_CHECK(p.apply({Change::handed_back}) == Action::land);
    BOOST_CHECK(p.state() == State::attached);
    BOOST_CHECK(p.device() == &d.B());
    BOOST_CHECK(!p.in_transit());
}

BOOST_AUTO_TEST_CASE(a_second_move_before_landing_changes_where_it_lands) {
    Devices d;
    Placement p(&d.A());
    BOOST_CHECK(p.apply({Change::move, &d.B()}) == Action::detach);
    BOOST_CHECK(p.apply({Change::move, &d.C()}) == Action::none); // one detach is enough
    BOOST_CHECK(p.apply({Change::handed_back}) == Action::land);
    BOOST_CHECK(p.device() == &d.C());
}

BOOST_AUTO_TEST_CASE(a_move_to_where_it_is_or_goes_does_nothing) {
    Devices d;
    Placement p(&d.A());
    BOOST_CHECK(p.apply({Change::move, &d.A()}) == Action::none);
    BOOST_CHECK(p.state() == State::attached);
    BOOST_CHECK(p.apply({Change::move, &d.B()}) == Action::detach);
    BOOST_CHECK(p.apply({Change::move, &d.B()}) == Action::none);
    BOOST_CHECK(p.destination() == &d.B());
}

BOOST_AUTO_TEST_CASE(a_stream_no_thread_holds_moves_and_closes_at_once) {
    Devices d;
    Placement p(&d.A());
    // Its device's RT thread has stopped: nothing would be handed back.
    BOOST_CHECK(p.apply({Change::move, &d.B(), nullptr, false}) == Action::land);
    BOOST_CHECK(p.device() == &d.B());
    BOOST_CHECK(p.apply({Change::close, nullptr, nullptr, false}) == Action::release);
    BOOST_CHECK(p.closing());
}

BOOST_AUTO_TEST_CASE(closing_waits_for_the_rt_thread_to_let_go) {
    Devices d;
    Placement p(&d.A());
    BOOST_CHECK(p.apply({Change::close}) == Action::detach);
    BOOST_CHECK(p.closing());
    BOOST_CHECK(p.apply({Change::close}) == Action::none);
    BOOST_CHECK(p.apply({Change::move, &d.B()}) == Action::none); // too late to move
    BOOST_CHECK(p.apply({Change::handed_back}) == Action::release);
}

BOOST_AUTO_TEST_CASE(closing_while_moving_frees_what_the_move_hands_back) {
    Devices d;
    Placement p(&d.A());
    BOOST_CHECK(p.apply({Change::move, &d.B()}) == Action::detach);
    BOOST_CHECK(p.apply({Change::close}) == Action::none); // the move's detach is on its way
    BOOST_CHECK(p.closing());
    BOOST_CHECK(p.destination() == &d.A());
    BOOST_CHECK(p.apply({Change::handed_back}) == Action::release);
}

BOOST_AUTO_TEST_CASE(a_rescued_stream_lands_elsewhere_and_remembers_where_it_was) {
    Devices d;
    Placement p(&d.A());
    BOOST_CHECK(p.apply({Change::rescue, &d.B(), &d.A()}) == Action::land);
    BOOST_CHECK(p.device() == &d.B());
    BOOST_CHECK_EQUAL(p.returns_to, "a");
    // Streams on other devices are not touched.
    Placement other(&d.C());
    BOOST_CHECK(other.apply({Change::rescue, &d.B(), &d.A()}) == Action::none);
    BOOST_CHECK(other.device() == &d.C());
    // Back where it was: nothing left to return to.
    BOOST_CHECK(p.apply({Change::move, &d.A()}) == Action::detach);
    BOOST_CHECK(p.apply({Change::handed_back}) == Action::land);
    BOOST_CHECK_EQUAL(p.returns_to, "");
}

BOOST_AUTO_TEST_CASE(a_pinned_stream_or_one_with_nowhere_to_go_is_parked) {
    Devices d;
    Placement pinned(&d.A());
    pinned.pinned = true;
    BOOST_CHECK(pinned.apply({Change::rescue, &d.B(), &d.A()}) == Action::none);
    BOOST_CHECK(pinned.state() == State::parked);
    BOOST_CHECK(pinned.device() == &d.A());

    Placement stranded(&d.A());
    BOOST_CHECK(stranded.apply({Change::rescue, nullptr, &d.A()}) == Action::none);
    BOOST_CHECK(stranded.state() == State::parked);
    // A parked stream is held by no thread: a move lands it at once, a
    // close frees it at once, whatever the device says.
    BOOST_CHECK(stranded.apply({Change::move, &d.B()}) == Action::land);
    BOOST_CHECK(stranded.device() == &d.B());
    BOOST_CHECK(pinned.apply({Change::close}) == Action::release);
}

BOOST_AUTO_TEST_CASE(a_rescue_keeps_a_move_going_and_redirects_one_into_the_leaving_device) {
    Devices d;
    // Leaving A while moving to C: it lands on C, not on the fallback.
    Placement away(&d.A());
    BOOST_CHECK(away.apply({Change::move, &d.C()}) == Action::detach);
    BOOST_CHECK(away.apply({Change::rescue, &d.B(), &d.A()}) == Action::land);
    BOOST_CHECK(away.device() == &d.C());
    // Moving from C into A, which leaves: it lands on the fallback when C
    // hands it back.
    Placement into(&d.C());
    BOOST_CHECK(into.apply({Change::move, &d.A()}) == Action::detach);
    BOOST_CHECK(into.apply({Change::rescue, &d.B(), &d.A()}) == Action::none);
    BOOST_CHECK(into.destination() == &d.B());
    BOOST_CHECK(into.apply({Change::handed_back}) == Action::land);
    BOOST_CHECK(into.device() == &d.B());
    // With no fallback it goes back where it is.
    Placement back(&d.C());
    BOOST_CHECK(back.apply({Change::move, &d.A()}) == Action::detach);
    BOOST_CHECK(back.apply({Change::rescue, nullptr, &d.A()}) == Action::none);
    BOOST_CHECK(back.apply({Change::handed_back}) == Action::land);
    BOOST_CHECK(back.device() == &d.C());
}

BOOST_AUTO_TEST_CASE(a_second_rescue_keeps_where_it_first_belonged) {
    Devices d;
    // On its way back to A when A goes: it will go back to A.
    Placement p(&d.B());
    BOOST_CHECK(p.apply({Change::move, &d.A()}) == Action::detach);
    BOOST_CHECK(p.apply({Change::rescue, &d.B(), &d.A()}) == Action::none);
    BOOST_CHECK_EQUAL(p.returns_to, "a");
    // B goes too before the move is handed back: with nowhere else to go
    // it waits on B, still to go back to A (not to B, which was only where
    // it waited).
    BOOST_CHECK(p.apply({Change::rescue, nullptr, &d.B()}) == Action::none);
    BOOST_CHECK(p.state() == Placement::State::parked);
    BOOST_CHECK(p.device() == &d.B());
    BOOST_CHECK_EQUAL(p.returns_to, "a");
    // Rescued from A to B, then from B to C: back to A, not B.
    Placement q(&d.A());
    BOOST_CHECK(q.apply({Change::rescue, &d.B(), &d.A()}) == Action::land);
    BOOST_CHECK(q.apply({Change::rescue, &d.C(), &d.B()}) == Action::land);
    BOOST_CHECK(q.device() == &d.C());
    BOOST_CHECK_EQUAL(q.returns_to, "a");
}

BOOST_AUTO_TEST_CASE(a_closing_stream_on_a_leaving_device_is_freed) {
    Devices d;
    Placement p(&d.A());
    BOOST_CHECK(p.apply({Change::close}) == Action::detach);
    BOOST_CHECK(p.apply({Change::rescue, &d.B(), &d.A()}) == Action::release);
}

BOOST_AUTO_TEST_CASE(a_replaced_device_hands_its_streams_to_its_successor) {
    Devices d;
    Placement on(&d.A());
    BOOST_CHECK(on.apply({Change::replace, &d.B(), &d.A()}) == Action::land);
    BOOST_CHECK(on.device() == &d.B());
    BOOST_CHECK_EQUAL(on.returns_to, ""); // the same device: nothing to return to

    Placement arriving(&d.C());
    BOOST_CHECK(arriving.apply({Change::move, &d.A()}) == Action::detach);
    BOOST_CHECK(arriving.apply({Change::replace, &d.B(), &d.A()}) == Action::none);
    BOOST_CHECK(arriving.destination() == &d.B());

    Placement leaving(&d.A());
    BOOST_CHECK(leaving.apply({Change::move, &d.C()}) == Action::detach);
    BOOST_CHECK(leaving.apply({Change::replace, &d.B(), &d.A()}) == Action::land);
    BOOST_CHECK(leaving.device() == &d.C()); // it goes on where it was going

    Placement closing(&d.A());
    BOOST_CHECK(closing.apply({Change::close}) == Action::detach);
    BOOST_CHECK(closing.apply({Change::replace, &d.B(), &d.A()}) == Action::release);
}

BOOST_AUTO_TEST_SUITE_END()
