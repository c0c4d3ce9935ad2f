// audiod's engine events as PulseAudio subscription events
// (pulse/subscription.h).
#include "pulse/subscription.h"

#include <boost/test/unit_test.hpp>

using namespace audiod;
using namespace audiod::pulse;

namespace {

proto::Event engine_event(const std::string& kind, const std::string& device, uint32_t stream = 0) {
    proto::Event event;
    event.kind = kind;
    event.device = device;
    event.stream_id = stream;
    return event;
}

} // namespace

BOOST_AUTO_TEST_SUITE(pulse_subscription)

BOOST_AUTO_TEST_CASE(devices_streams_and_the_default_become_pulse_events) {
    DeviceIndices sinks;
    DeviceIndices sources;
    sinks.index("speakers");
    sources.index("speakers.monitor");
    sources.index("mic");

    auto events = subscription_events(engine_event("sink-added", "hdmi"), sinks, sources);
    BOOST_REQUIRE_EQUAL(events.size(), 2u); // the sink and its monitor
    BOOST_CHECK(events[0] == (SubscriptionEvent{Facility::sink, Happened::added, 1}));
    BOOST_CHECK(events[1] == (SubscriptionEvent{Facility::source, Happened::added, 2}));
    BOOST_CHECK_EQUAL(events[0].word(), 0x00u);
    BOOST_CHECK_EQUAL(events[1].mask_bit(), 0x02u);

    events = subscription_events(engine_event("sink-changed", "speakers"), sinks, sources);
    BOOST_REQUIRE_EQUAL(events.size(), 1u);
    BOOST_CHECK_EQUAL(events[0].word(), 0x10u);
    BOOST_CHECK_EQUAL(events[0].index, 0u);

    events = subscription_events(engine_event("stream-moved", "speakers", 7), sinks, sources);
    BOOST_REQUIRE_EQUAL(events.size(), 1u);
    BOOST_CHECK(events[0] == (SubscriptionEvent{Facility::sink_input, Happened::changed, 7}));
    // A stream on a source is a source output.
    events = subscription_events(engine_event("stream-removed", "mic", 8), sinks, sources);
    BOOST_REQUIRE_EQUAL(events.size(), 1u);
    BOOST_CHECK_EQUAL(events[0].word(), 0x23u);

    events = subscription_events(engine_event("default-changed", "speakers"), sinks, sources);
    BOOST_REQUIRE_EQUAL(events.size(), 1u);
    BOOST_CHECK_EQUAL(events[0].word(), 0x17u);
    BOOST_CHECK_EQUAL(events[0].index, kInvalidIndex);

    BOOST_CHECK(subscription_events(engine_event("app-changed", ""), sinks, sources).empty());
    BOOST_CHECK(subscription_events(engine_event("sinkhole", "x"), sinks, sources).empty());
}

BOOST_AUTO_TEST_SUITE_END()
