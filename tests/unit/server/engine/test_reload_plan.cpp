// What a reload does, worked out before anything changes
// (engine/reload_plan.h): a pure function of the running configuration,
// the new one, and what runs now.
#include "engine/reload_plan.h"

#include <boost/test/unit_test.hpp>

#include <set>
#include <utility>

using namespace audiod;

namespace {

ServerConfig config_with(std::vector<DeviceConfig> sinks, std::vector<DeviceConfig> sources = {}) {
    ServerConfig config;
    config.source = "test.conf";
    config.sinks = std::move(sinks);
    config.sources = std::move(sources);
    return config;
}

// Runs every device of `running` (as started from it), plus `extra`.
struct World {
    std::set<std::pair<std::string, DeviceKind>> devices;
    std::set<std::string> missing_types;

    explicit World(const ServerConfig& running) {
        for (const DeviceConfig& d : running.sinks) {
            devices.insert({d.name, DeviceKind::sink});
        }
        for (const DeviceConfig& d : running.sources) {
            devices.insert({d.name, DeviceKind::source});
        }
    }
    ReloadContext context() const {
        ReloadContext c;
        c.runs = [this](const std::string& name, DeviceKind kind) {
            return devices.count({name, kind}) != 0;
        };
        c.type_error = [this](const std::string& type) {
            return missing_types.count(type) != 0 ? "no module " + type : std::string();
        };
        return c;
    }
};

std::vector<std::string> names(const std::vector<ReloadPlan::Step>& steps) {
    std::vector<std::string> out;
    for (const auto& step : steps) {
        out.push_back(step.device->name);
    }
    return out;
}

const ReloadPlan& plan_of(const std::variant<ReloadPlan, ClientError>& result) {
    if (const auto* error = std::get_if<ClientError>(&result)) {
        BOOST_FAIL("refused: " << error->message);
    }
    return std::get<ReloadPlan>(result);
}

std::string refusal(const std::variant<ReloadPlan, ClientError>& result) {
    const auto* error = std::get_if<ClientError>(&result);
    return error != nullptr ? error->message : "(planned)";
}

using Names = std::vector<std::string>;

} // namespace

BOOST_AUTO_TEST_SUITE(reload_plan)

BOOST_AUTO_TEST_CASE(the_same_configuration_changes_nothing) {
    const ServerConfig running = config_with({{"out", "null", {}, 1}}, {{"mic", "alsa", {}, 2}});
    const ServerConfig next = running;
    const auto result = plan_reload(running, next, World(running).context());
    const ReloadPlan& plan = plan_of(result);
    BOOST_CHECK(plan.opening.empty());
    BOOST_CHECK(plan.reopening.empty());
    BOOST_CHECK(plan.closing.empty());
}

BOOST_AUTO_TEST_CASE(new_devices_open_changed_ones_reopen_and_gone_ones_close) {
    const ServerConfig running = config_with({{"keep", "null", {}, 1},
                                              {"change", "file", {{"path", "a.wav"}}, 2},
                                              {"gone", "null", {}, 3}});
    const ServerConfig next = config_with({{"keep", "null", {}, 1},
                                           {"change", "file", {{"path", "b.wav"}}, 2},
                                           {"new", "null", {}, 3}},
                                          {{"mic", "alsa", {}, 4}});
    const auto result = plan_reload(running, next, World(running).context());
    const ReloadPlan& plan = plan_of(result);
    BOOST_CHECK(names(plan.opening) == (Names{"new", "mic"})); // sinks first
    BOOST_CHECK(plan.opening[1].kind == DeviceKind::source);
    BOOST_CHECK(names(plan.reopening) == Names{"change"});
    BOOST_CHECK(names(plan.closing) == Names{"gone"});
    // The plan points into the configurations it came from.
    BOOST_CHECK(plan.closing[0].device == &running.sinks[2]);
    BOOST_CHECK(plan.reopening[0].device == &next.sinks[1]);
}

BOOST_AUTO_TEST_CASE(a_changed_server_format_reopens_every_running_device) {
    const ServerConfig running = config_with({{"a", "null", {}, 1}, {"b", "null", {}, 2}});
    ServerConfig next = running;
    next.quantum = 128;
    const auto result = plan_reload(running, next, World(running).context());
    BOOST_CHECK(names(plan_of(result).reopening) == (Names{"a", "b"}));
}

BOOST_AUTO_TEST_CASE(a_device_loaded_at_run_time_under_a_configured_name_is_reopened) {
    const ServerConfig running = config_with({{"a", "null", {}, 1}});
    World world(running);
    world.devices.insert({"late", DeviceKind::sink}); // audioctl load-sink
    const ServerConfig next = config_with({{"a", "null", {}, 1}, {"late", "file", {}, 2}});
    const auto result = plan_reload(running, next, world.context());
    const ReloadPlan& plan = plan_of(result);
    BOOST_CHECK(names(plan.reopening) == Names{"late"});
    BOOST_CHECK(plan.opening.empty());
    // And one loaded at run time that the file does not name is left alone.
    const auto kept = plan_reload(running, running, world.context());
    BOOST_CHECK(plan_of(kept).closing.empty());
}

BOOST_AUTO_TEST_CASE(what_cannot_work_is_refused_with_file_and_line) {
    const ServerConfig running = config_with({{"out", "null", {}, 1}});
    World world(running);
    world.missing_types.insert("nosuch");
    // A source named like a running sink.
    BOOST_CHECK_EQUAL(refusal(plan_reload(
                          running, config_with({{"out", "null", {}, 1}}, {{"out", "alsa", {}, 7}}),
                          world.context())),
                      "test.conf:7: a sink named 'out' is running; unload it first");
    // A type with no module.
    BOOST_CHECK_EQUAL(
        refusal(plan_reload(running, config_with({{"out", "nosuch", {}, 3}}), world.context())),
        "test.conf:3: no module nosuch");
    // A source relayed into a sink the new file does not have.
    BOOST_CHECK_EQUAL(
        refusal(plan_reload(
            running, config_with({{"out", "null", {}, 1}}, {{"rx", "rtp", {{"sink", "there"}}, 5}}),
            world.context())),
        "test.conf:5: sink = \"there\": no sink has that name");
    // A relay's queue out of range.
    BOOST_CHECK_EQUAL(
        refusal(plan_reload(
            running,
            config_with({{"out", "null", {}, 1}},
                        {{"rx", "rtp", {{"sink", "out"}, {"play-latency-ms", "0"}}, 6}}),
            world.context())),
        "test.conf:6: play-latency-ms = 0 is out of range (1..2000)");
    // "auto" needs no module check: it resolves when opened.
    BOOST_CHECK(std::holds_alternative<ReloadPlan>(
        plan_reload(running, config_with({{"out", "auto", {}, 1}}), world.context())));
}

BOOST_AUTO_TEST_SUITE_END()
