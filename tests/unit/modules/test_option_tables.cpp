// Every module's option tables (audiod/module.h's audiod_option_spec) keep
// the header's rules, which the manual's own test relies on, and are the
// lists the modules check: each sink and source refuses a key its table
// lacks, and names the table's keys when it does.
#include "unit/modules/module_tables.h"

#include <boost/test/unit_test.hpp>

#include <algorithm>
#include <cstdlib>
#include <set>
#include <string>
#include <string_view>
#include <vector>

using namespace audiod::test;

namespace {

const std::set<std::string_view> kTypes = {"integer", "number", "boolean", "enum", "string"};

bool is_key(std::string_view key) {
    return !key.empty() && key.front() != '-' && key.back() != '-' &&
           std::all_of(key.begin(), key.end(), [](char c) {
               return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-';
           });
}

std::vector<std::string_view> split(std::string_view text, std::string_view separator) {
    std::vector<std::string_view> parts;
    for (size_t at = 0;;) {
        const size_t end = text.find(separator, at);
        parts.push_back(text.substr(at, end - at));
        if (end == std::string_view::npos) {
            return parts;
        }
        at = end + separator.size();
    }
}

bool parse_number(std::string_view text, bool integer, double& value) {
    const std::string copy(text);
    char* end = nullptr;
    value = integer ? static_cast<double>(std::strtoll(copy.c_str(), &end, 10))
                    : std::strtod(copy.c_str(), &end);
    return !copy.empty() && end == copy.c_str() + copy.size();
}

// What is wrong with one spec, or "".
std::string problem(const audiod_option_spec& spec) {
    if (spec.key == nullptr || !is_key(spec.key)) {
        return "a key that is not lower-case words joined by '-'";
    }
    if (spec.type == nullptr || !kTypes.contains(spec.type)) {
        return "type '" + std::string(spec.type ? spec.type : "(null)") + "'";
    }
    if (spec.range == nullptr || spec.summary == nullptr || *spec.summary == '\0' ||
        std::string_view(spec.summary).find('\n') != std::string_view::npos) {
        return "no range, or a summary that is not one line";
    }
    const std::string_view type = spec.type;
    const std::string_view range = spec.range;
    const char* value = spec.default_value;
    if (type == "enum") {
        const auto values = split(range, "|");
        if (range.empty() || std::any_of(values.begin(), values.end(),
                                         [](std::string_view v) { return v.empty(); })) {
            return "an enum whose range is not a|b|c";
        }
        if (value != nullptr && std::find(values.begin(), values.end(), value) == values.end()) {
            return "a default that is not in its range";
        }
    } else if (type == "integer" || type == "number") {
        double lo = 0;
        double hi = 0;
        const auto bounds = split(range, "..");
        if (!range.empty() &&
            (bounds.size() != 2 || !parse_number(bounds[0], type == "integer", lo) ||
             !parse_number(bounds[1], type == "integer", hi) || lo > hi)) {
            return "a range that is not LO..HI";
        }
        double v = 0;
        if (value != nullptr && (!parse_number(value, type == "integer", v) ||
                                 (!range.empty() && (v < lo || v > hi)))) {
            return "a default that is not a number in its range";
        }
    } else if (!range.empty()) {
        return "a range on a " + std::string(type);
    } else if (type == "boolean" && value != nullptr && std::string_view(value) != "true" &&
               std::string_view(value) != "false") {
        return "a boolean default that is not true or false";
    }
    return "";
}

void check_table(const std::string& device, std::span<const audiod_option_spec> specs) {
    std::set<std::string_view> keys;
    for (const audiod_option_spec& spec : specs) {
        const std::string why = problem(spec);
        BOOST_CHECK_MESSAGE(why.empty(),
                            device << " option '" << (spec.key ? spec.key : "") << "': " << why);
        BOOST_CHECK_MESSAGE(spec.key == nullptr || keys.insert(spec.key).second,
                            device << " lists '" << spec.key << "' twice");
    }
}

std::string listed(std::span<const audiod_option_spec> specs) {
    std::string keys;
    for (const audiod_option_spec& spec : specs) {
        keys += (keys.empty() ? "" : ", ") + std::string(spec.key);
    }
    return keys.empty() ? "none" : keys;
}

// Opens the device with an option it cannot know: the refusal must list
// exactly its table's keys, which proves the table is what it checks.
template <class Ops>
void check_refusal(const std::string& device, const Ops& ops) {
    const audiod_option colour{"colour", "blue"};
    const audiod_device_config config{"t", 48000, 2, 256, &colour, 1};
    const audiod_host host{AUDIOD_MODULE_ABI_VERSION, [](int, const char*, const char*) {}, nullptr,
                           nullptr};
    void* instance = nullptr;
    audiod_open_info info{};
    char error[1024] = {};
    BOOST_REQUIRE(ops.open(&host, &config, &instance, &info, error, sizeof error) < 0);
    const std::string expected = device + " has no option 'colour' (known: " +
                                 listed({ops.option_specs, ops.option_spec_count}) + ")";
    BOOST_CHECK_EQUAL(std::string(error), expected);
}

} // namespace

BOOST_AUTO_TEST_SUITE(option_tables)

BOOST_AUTO_TEST_CASE(every_table_keeps_the_headers_rules) {
    for (const char* type : kModuleTypes) {
        const audiod_module& module = load_module(type);
        BOOST_CHECK(module.sink == nullptr || module.sink->option_spec_count == 0 ||
                    module.sink->option_specs != nullptr);
        BOOST_CHECK(module.source == nullptr || module.source->option_spec_count == 0 ||
                    module.source->option_specs != nullptr);
        check_table(std::string("the ") + type + " sink", sink_option_specs(module));
        check_table(std::string("the ") + type + " source", source_option_specs(module));
    }
}

BOOST_AUTO_TEST_CASE(every_device_refuses_a_key_its_table_lacks_and_lists_the_table) {
    for (const char* type : kModuleTypes) {
        const audiod_module& module = load_module(type);
        BOOST_TEST_CONTEXT(type) {
            if (module.sink != nullptr) {
                check_refusal(std::string("the ") + type + " sink", *module.sink);
            }
            if (module.source != nullptr) {
                check_refusal(std::string("the ") + type + " source", *module.source);
            }
        }
    }
}

BOOST_AUTO_TEST_SUITE_END()
