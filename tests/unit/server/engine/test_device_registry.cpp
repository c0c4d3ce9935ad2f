// Devices by name and direction, the default sink and where streams go
// when a device leaves (engine/device_registry.h), on stepped sinks.
#include "engine/device_registry.h"
#include "unit/server/stepped_sink.h"

#include <boost/test/unit_test.hpp>

using namespace audiod;
using namespace audiod::test;

namespace {

// Records what the registry announces.
struct Recorder : EngineObserver {
    std::vector<proto::Event> events;
    std::vector<std::string> opened;
    void on_event(const proto::Event& event) override { events.push_back(event); }
    void on_device_opened(Device& device) override { opened.push_back(device.name()); }
    void on_device_closing(Device&) override {}
    void on_client_fault(uint32_t, const std::string&) override {}
};

struct RegistryRig {
    RegistryRig()
        : loader("/nonexistent")
        , registry(config, loader, host, announcer) {
        loader.add_builtin("stepped", &stepped_module());
        config.quantum = 64;
        config.rt_priority = 0;
        host.abi_version = AUDIOD_MODULE_ABI_VERSION;
        host.log = [](int, const char*, const char*) {};
        announcer.set_observer(&recorder);
    }
    ~RegistryRig() {
        for (SteppedDevice* device : stepped_devices()) {
            device->stopping = true;
        }
        registry.clear();
    }
    Device& open(const std::string& name, DeviceKind kind = DeviceKind::sink,
                 OptionList options = {}) {
        auto opened = registry.open("stepped", name, options, kind);
        if (const auto* error = std::get_if<std::string>(&opened)) {
            BOOST_FAIL("cannot open " << name << ": " << *error);
        }
        return *registry.add(std::move(std::get<std::unique_ptr<Device>>(opened)), "stepped", {})
                    .device;
    }

    ServerConfig config;
    ModuleLoader loader;
    audiod_host host{};
    Recorder recorder;
    Announcer announcer;
    DeviceRegistry registry;
};

} // namespace

BOOST_AUTO_TEST_SUITE(device_registry)

BOOST_AUTO_TEST_CASE(devices_are_found_by_name_and_direction) {
    RegistryRig rig;
    Device& out = rig.open("out");
    Device& mic = rig.open("mic", DeviceKind::source);
    BOOST_CHECK(rig.registry.find_sink("out") == &out);
    BOOST_CHECK(rig.registry.find_sink("mic") == nullptr);
    BOOST_CHECK(rig.registry.find("mic", DeviceKind::source) == &mic);
    BOOST_CHECK(rig.registry.entry_named("mic")->device.get() == &mic);
    BOOST_CHECK(rig.registry.by_event_fd(out.event_fd()) == &out);
    BOOST_CHECK_EQUAL(rig.registry.count(DeviceKind::sink), 1u);
    BOOST_CHECK((rig.recorder.opened == std::vector<std::string>{"out", "mic"}));
    BOOST_CHECK_EQUAL(rig.recorder.events.size(), 2u);
    BOOST_CHECK_EQUAL(rig.recorder.events[0].kind, "sink-added");

    // What a record stream may name: a capture source, a monitor, "" for
    // the default sink's monitor.
    std::string wanted;
    BOOST_CHECK(rig.registry.find_recordable("mic", &wanted) == &mic);
    BOOST_CHECK_EQUAL(wanted, "mic");
    BOOST_CHECK(rig.registry.find_recordable("out.monitor", &wanted) == &out);
    BOOST_CHECK_EQUAL(wanted, "out");
    BOOST_CHECK(rig.registry.find_recordable("", &wanted) == &out);
    BOOST_CHECK(rig.registry.find_recordable("out", &wanted) == nullptr);
    BOOST_CHECK(rig.registry.find_recordable("mic.monitor", &wanted) == nullptr);
}

BOOST_AUTO_TEST_CASE(the_engine_takes_the_format_options_and_checks_them) {
    RegistryRig rig;
    Device& own = rig.open("own", DeviceKind::sink, {{"quantum", "32"}, {"rate", "44100"}});
    BOOST_CHECK_EQUAL(own.format().quantum, 32u);
    BOOST_CHECK_EQUAL(own.format().rate, 44100u);
    BOOST_CHECK_EQUAL(own.format().channels, 2u);
    auto refused = rig.registry.open("stepped", "bad", {{"quantum", "8"}}, DeviceKind::sink);
    BOOST_REQUIRE(std::holds_alternative<std::string>(refused));
    BOOST_CHECK_EQUAL(std::get<std::string>(refused), "quantum = 8 is out of range (16..8192)");
    // The largest cycle, in a stream's frames at its rate: 32 frames at
    // 44.1 kHz are 35 at 48 kHz, less than the other sink's 64.
    rig.open("plain");
    BOOST_CHECK_EQUAL(rig.registry.largest_cycle(48000), 64u);
    BOOST_CHECK_EQUAL(rig.registry.largest_cycle(96000), 128u);
}

BOOST_AUTO_TEST_CASE(the_default_sink_and_the_fallback_skip_failed_devices) {
    RegistryRig rig;
    Device& a = rig.open("a");
    Device& b = rig.open("b");
    rig.open("mic", DeviceKind::source);
    rig.registry.set_default("b");
    BOOST_CHECK(rig.registry.default_sink() == &b);
    BOOST_CHECK(rig.registry.fallback_for(b) == &a);
    BOOST_CHECK(rig.registry.fallback_for(a) == &b);
    b.mark_failed();
    BOOST_CHECK(rig.registry.default_sink() == &a); // while b is away
    BOOST_CHECK_EQUAL(rig.registry.default_name(), "b");
    a.mark_failed();
    BOOST_CHECK(rig.registry.default_sink() == nullptr); // a source is never one
    BOOST_CHECK(rig.registry.fallback_for(a) == nullptr);

    rig.recorder.events.clear();
    BOOST_CHECK(rig.registry.change_default("a"));
    BOOST_CHECK(!rig.registry.change_default("a"));
    BOOST_REQUIRE_EQUAL(rig.recorder.events.size(), 1u);
    BOOST_CHECK_EQUAL(rig.recorder.events[0].kind, "default-changed");
    BOOST_CHECK_EQUAL(rig.recorder.events[0].previous_device, "b");
}

BOOST_AUTO_TEST_CASE(a_replaced_device_keeps_its_settings_and_starts_its_watch_afresh) {
    RegistryRig rig;
    Device& old = rig.open("out");
    DeviceRegistry::Entry& entry = *rig.registry.entry_of(old);
    entry.volume = 0.25f;
    entry.muted = true;
    entry.failure_announced = true;
    entry.progress.stalled = true;
    entry.options = {{"latency", "64"}};
    stepped_devices().front()->stopping = true;
    old.stop();
    auto opened = rig.registry.open("stepped", "out", {}, DeviceKind::sink);
    BOOST_REQUIRE(std::holds_alternative<std::unique_ptr<Device>>(opened));
    std::unique_ptr<Device> replaced =
        rig.registry.replace(entry, std::move(std::get<std::unique_ptr<Device>>(opened)));
    BOOST_CHECK(replaced.get() == &old);
    BOOST_CHECK(rig.registry.find_sink("out") == entry.device.get());
    BOOST_CHECK_EQUAL(entry.volume, 0.25f);
    BOOST_CHECK(entry.muted);
    BOOST_CHECK((entry.options == OptionList{{"latency", "64"}}));
    BOOST_CHECK(!entry.failure_announced);
    BOOST_CHECK(!entry.progress.stalled);
}

BOOST_AUTO_TEST_CASE(a_failed_device_is_reopened_once_its_failure_is_handled_and_its_turn_comes) {
    RegistryRig rig;
    Device& out = rig.open("out");
    DeviceRegistry::Entry& entry = *rig.registry.entry_of(out);
    const auto now = std::chrono::steady_clock::now();
    stepped_devices().front()->stopping = true;
    out.stop();
    out.mark_failed();
    BOOST_CHECK(rig.registry.reopen_failed(now).empty()); // not handled yet
    entry.failure_announced = true;
    auto reopened = rig.registry.reopen_failed(now);
    BOOST_REQUIRE_EQUAL(reopened.size(), 1u);
    BOOST_CHECK(reopened[0].entry == &entry);
    BOOST_CHECK_EQUAL(reopened[0].fresh->name(), "out");
    BOOST_CHECK(!reopened[0].fresh->failed());
    // Not again before a second has passed.
    BOOST_CHECK(rig.registry.reopen_failed(now + std::chrono::milliseconds(500)).empty());
    stepped_devices().back()->stopping = true;
}

BOOST_AUTO_TEST_SUITE_END()
