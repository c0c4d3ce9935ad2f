// PulseAudio modules as audiod has them: module arguments read as
// PulseAudio reads them, and module-null-sink's as an audiod null sink
// (pulse/pulse_modules.h).
#include "pulse/pulse_modules.h"

#include <boost/test/unit_test.hpp>

using namespace audiod;
using namespace audiod::pulse;

namespace {

NullSinkPlan planned(std::string_view arguments) {
    auto plan = plan_null_sink(arguments);
    if (const auto* refused = std::get_if<std::string>(&plan)) {
        BOOST_FAIL(*refused);
    }
    return std::get<NullSinkPlan>(plan);
}

std::string refusal(std::string_view arguments) {
    auto plan = plan_null_sink(arguments);
    BOOST_REQUIRE(std::holds_alternative<std::string>(plan));
    return std::get<std::string>(plan);
}

} // namespace

BOOST_AUTO_TEST_SUITE(pulse_modules)

BOOST_AUTO_TEST_CASE(arguments_are_read_with_quotes_and_escapes) {
    std::string error;
    const auto read =
        parse_module_arguments("  a=1 b='two words' c=\"x\\\"y\" d=back\\ slash e=", error);
    BOOST_REQUIRE_MESSAGE(read, error);
    BOOST_CHECK_EQUAL(read->at("a"), "1");
    BOOST_CHECK_EQUAL(read->at("b"), "two words");
    BOOST_CHECK_EQUAL(read->at("c"), "x\"y");
    BOOST_CHECK_EQUAL(read->at("d"), "back slash");
    BOOST_CHECK_EQUAL(read->at("e"), "");
    BOOST_CHECK(parse_module_arguments("", error)->empty());
}

BOOST_AUTO_TEST_CASE(arguments_that_cannot_be_read_say_why) {
    std::string error;
    BOOST_CHECK(!parse_module_arguments("novalue", error));
    BOOST_CHECK_EQUAL(error, "'novalue' has no value (write key=value)");
    BOOST_CHECK(!parse_module_arguments("a='open", error));
    BOOST_CHECK_EQUAL(error, "the value of 'a' does not end (an unclosed quote)");
    BOOST_CHECK(!parse_module_arguments("a=1 a=2", error));
    BOOST_CHECK_EQUAL(error, "'a' is given twice");
    BOOST_CHECK(!parse_module_arguments("a='x'b=2", error));
    BOOST_CHECK(!parse_module_arguments("=1", error));
    BOOST_CHECK(!parse_module_arguments("a=\\", error));
}

BOOST_AUTO_TEST_CASE(a_null_sink_takes_its_name_description_rate_and_channels) {
    NullSinkPlan plan = planned("");
    BOOST_CHECK_EQUAL(plan.name, "null");
    BOOST_CHECK(plan.options.empty());
    plan = planned("sink_name=virt sink_properties='device.description=\"My Sink\" x=y' "
                   "rate=44100 channels=1 format=s16le channel_map=mono norewinds=1");
    BOOST_CHECK_EQUAL(plan.name, "virt");
    BOOST_CHECK_EQUAL(plan.description, "My Sink");
    const OptionList expected{{"channels", "1"}, {"rate", "44100"}};
    BOOST_CHECK(plan.options == expected);
}

BOOST_AUTO_TEST_CASE(a_null_sink_refuses_what_it_does_not_know) {
    BOOST_CHECK_EQUAL(refusal("sink_name=a colour=red"),
                      "module-null-sink has no argument 'colour'");
    BOOST_CHECK_EQUAL(refusal("sink_properties='a'"),
                      "sink_properties: 'a' has no value (write key=value)");
    BOOST_CHECK_EQUAL(refusal("sink_name"), "'sink_name' has no value (write key=value)");
}

BOOST_AUTO_TEST_CASE(modules_keep_their_index_and_go_with_their_sink) {
    PulseModules modules;
    const uint32_t first = modules.add("module-null-sink", "sink_name=a", "a", "");
    const uint32_t second = modules.add("module-null-sink", "sink_name=b", "b", "B");
    BOOST_CHECK_NE(first, second);
    BOOST_REQUIRE(modules.owner_of("b") != nullptr);
    BOOST_CHECK_EQUAL(modules.owner_of("b")->index, second);
    BOOST_CHECK(modules.owner_of("c") == nullptr);
    BOOST_CHECK(modules.forget_sink("a") == first);
    BOOST_CHECK(!modules.forget_sink("a"));
    BOOST_CHECK(modules.find(first) == nullptr);
    // An index is never given again.
    BOOST_CHECK_NE(modules.add("module-null-sink", "", "a", ""), first);
    BOOST_CHECK_EQUAL(modules.all().size(), 2u);
}

BOOST_AUTO_TEST_CASE(module_entries_have_the_fields_of_each_version) {
    PulseModule module{3, "module-null-sink", "sink_name=a", "a", ""};
    for (const uint32_t version : {13u, 35u}) {
        TagWriter w;
        put_module(w, module, 2, version);
        TagReader r(w.bytes());
        uint32_t index = 0;
        std::string name;
        std::string argument;
        uint32_t used = 0;
        BOOST_REQUIRE(r.get_u32(index) && r.get_string(name) && r.get_string(argument) &&
                      r.get_u32(used));
        BOOST_CHECK_EQUAL(index, 3u);
        BOOST_CHECK_EQUAL(argument, "sink_name=a");
        BOOST_CHECK_EQUAL(used, 2u);
        if (version < 15) {
            bool auto_unload = true;
            BOOST_CHECK(r.get_bool(auto_unload) && !auto_unload);
        } else {
            PropertyList properties;
            BOOST_CHECK(r.get_proplist(properties));
        }
        BOOST_CHECK(r.done());
    }
}

BOOST_AUTO_TEST_SUITE_END()
