// The pulse thread's way to the engine (pulse/engine_gateway.h): jobs run
// on the control side and answered on the pulse side, in order, and engine
// events taken only while a handler (a running pulse server) is there.
#include "pulse/engine_gateway.h"
#include "unit/server/engine_rig.h"

#include <boost/test/unit_test.hpp>

#include <poll.h>

using namespace audiod;
using namespace audiod::pulse;

namespace {

bool readable(int fd) {
    pollfd p{fd, POLLIN, 0};
    return ::poll(&p, 1, 0) == 1;
}

} // namespace

BOOST_AUTO_TEST_SUITE(pulse_engine_gateway)

BOOST_AUTO_TEST_CASE(jobs_are_answered_in_order_and_wake_each_side) {
    test::EngineRig rig(false);
    EngineGateway gateway;
    std::vector<int> answered;
    size_t sinks_seen = 0;
    BOOST_CHECK(!readable(gateway.jobs_fd()));
    for (int i = 0; i < 3; ++i) {
        gateway.post([&answered, i](Engine&) -> EngineGateway::Answer {
            return [&answered, i] { answered.push_back(i); };
        });
    }
    gateway.post([&sinks_seen](Engine& engine) -> EngineGateway::Answer {
        sinks_seen = engine.list_sinks().size();
        return {}; // no answer
    });
    BOOST_CHECK(readable(gateway.jobs_fd()));
    gateway.run_jobs(*rig.engine);
    BOOST_CHECK_EQUAL(sinks_seen, 1u);
    BOOST_CHECK(!readable(gateway.jobs_fd()));
    BOOST_CHECK(readable(gateway.answers_fd()));
    gateway.run_answers();
    BOOST_CHECK(!readable(gateway.answers_fd()));
    BOOST_CHECK(answered == std::vector<int>({0, 1, 2}));
}

BOOST_AUTO_TEST_CASE(events_are_queued_only_while_a_handler_takes_them) {
    EngineGateway gateway;
    proto::Event event;
    event.kind = "sink-added";
    gateway.publish(event);
    BOOST_CHECK(!readable(gateway.answers_fd())); // no pulse server: nothing kept
    std::vector<std::string> seen;
    gateway.set_event_handler([&](const proto::Event& e) { seen.push_back(e.kind); });
    gateway.publish(event);
    BOOST_CHECK(readable(gateway.answers_fd()));
    gateway.run_answers();
    BOOST_CHECK(seen == std::vector<std::string>({"sink-added"}));
    gateway.set_event_handler({});
    gateway.publish(event);
    BOOST_CHECK(!readable(gateway.answers_fd()));
}

BOOST_AUTO_TEST_SUITE_END()
