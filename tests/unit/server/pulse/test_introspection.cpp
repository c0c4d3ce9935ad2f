// What introspection says of the engine (pulse/introspection.h): lookups by
// index, name and alias, volumes, client indices, and entries by version.
// (pactl reading every entry whole is in the integration suite.)
#include "pulse/introspection.h"

#include <boost/test/unit_test.hpp>

using namespace audiod;
using namespace audiod::pulse;

namespace {

EngineSnapshot two_sinks() {
    EngineSnapshot snapshot;
    for (const char* name : {"speakers", "hdmi"}) {
        proto::SinkInfo sink;
        sink.name = name;
        sink.type = "null";
        sink.rate = 48000;
        sink.channels = 2;
        sink.quantum = 256;
        sink.format = static_cast<uint32_t>(audiod::SampleFormat::s16le);
        sink.state = "running";
        snapshot.sinks.push_back(sink);
        proto::SourceInfo monitor;
        monitor.name = std::string(name) + ".monitor";
        monitor.type = "monitor";
        monitor.sink = name;
        monitor.rate = 48000;
        monitor.channels = 2;
        snapshot.sources.push_back(monitor);
    }
    snapshot.default_sink = "hdmi";
    return snapshot;
}

} // namespace

BOOST_AUTO_TEST_SUITE(pulse_introspection)

BOOST_AUTO_TEST_CASE(devices_are_found_by_index_name_and_default) {
    EngineSnapshot s = two_sinks();
    DeviceIndices sinks;
    DeviceIndices sources;
    number(s, sinks, sources);
    BOOST_CHECK(find_sink(s, 0, std::nullopt) == std::optional<uint32_t>(0));
    BOOST_CHECK(!find_sink(s, 2, std::nullopt));
    BOOST_CHECK(find_sink(s, kInvalidIndex, std::string("speakers")) == std::optional<uint32_t>(0));
    BOOST_CHECK(find_sink(s, kInvalidIndex, std::nullopt) == std::optional<uint32_t>(1));
    BOOST_CHECK(find_sink(s, kInvalidIndex, std::string("@DEFAULT_SINK@")) ==
                std::optional<uint32_t>(1));
    BOOST_CHECK(!find_sink(s, kInvalidIndex, std::string("nowhere")));
    BOOST_CHECK_EQUAL(default_source(s), "hdmi.monitor");
    BOOST_CHECK(find_source(s, kInvalidIndex, std::string("@DEFAULT_MONITOR@")) ==
                std::optional<uint32_t>(1));
    EngineSnapshot none;
    BOOST_CHECK(!find_sink(none, kInvalidIndex, std::nullopt));
    // Unnumbered (the control thread's): no index finds anything.
    BOOST_CHECK(!find_sink(two_sinks(), 0, std::nullopt));
}

BOOST_AUTO_TEST_CASE(a_devices_index_is_its_own_for_good) {
    DeviceIndices sinks;
    DeviceIndices sources;
    EngineSnapshot s = two_sinks();
    number(s, sinks, sources);
    BOOST_CHECK(s.sink_indices == std::vector<uint32_t>({0, 1}));
    // speakers goes: hdmi keeps 1, and its place in the list is now 0.
    s.sinks.erase(s.sinks.begin());
    number(s, sinks, sources);
    BOOST_CHECK(s.sink_indices == std::vector<uint32_t>({1}));
    BOOST_CHECK(find_sink(s, 1, std::nullopt) == std::optional<uint32_t>(0));
    BOOST_CHECK(!find_sink(s, 0, std::nullopt));
    // A new sink takes a new index; speakers back takes its old one.
    s.sinks.push_back(two_sinks().sinks[0]);
    proto::SinkInfo usb = s.sinks.back();
    usb.name = "usb";
    s.sinks.push_back(usb);
    number(s, sinks, sources);
    BOOST_CHECK(s.sink_indices == std::vector<uint32_t>({1, 0, 2}));
    BOOST_CHECK_EQUAL(sinks.name(2).value_or(""), "usb");
    BOOST_CHECK(!sinks.name(3));
}

BOOST_AUTO_TEST_CASE(volumes_are_cubic_and_clients_keep_apart) {
    BOOST_CHECK_EQUAL(pulse_volume(1.0f), kNormVolume);
    BOOST_CHECK_EQUAL(pulse_volume(0.125f), kNormVolume / 2);
    BOOST_CHECK_EQUAL(pulse_volume(0.0f), 0u);
    BOOST_CHECK_EQUAL(pulse_volume(-1.0f), 0u);
    // A libpulse connection is its own index; a libaudiod client is apart
    // from them; a relay is no client.
    BOOST_CHECK_EQUAL(pulse_client_of(0x80000003u, 0x80000000u), 3u);
    BOOST_CHECK_EQUAL(pulse_client_of(3, 0x80000000u), kNativeClientBase + 3);
    BOOST_CHECK_EQUAL(pulse_client_of(0, 0x80000000u), kInvalidIndex);
}

BOOST_AUTO_TEST_CASE(an_older_client_gets_the_fields_of_its_version) {
    EngineSnapshot s = two_sinks();
    DeviceIndices sinks;
    DeviceIndices sources;
    number(s, sinks, sources);
    TagWriter old_sink;
    TagWriter new_sink;
    put_sink(old_sink, s, 0, 13);
    put_sink(new_sink, s, 0, 35);
    BOOST_CHECK_LT(old_sink.bytes().size(), new_sink.bytes().size());
    // The first fields are the same: index, name.
    TagReader r(new_sink.bytes());
    uint32_t index = 99;
    std::string name;
    BOOST_CHECK(r.get_u32(index) && r.get_string(name));
    BOOST_CHECK_EQUAL(index, 0u);
    BOOST_CHECK_EQUAL(name, "speakers");
}

BOOST_AUTO_TEST_SUITE_END()
