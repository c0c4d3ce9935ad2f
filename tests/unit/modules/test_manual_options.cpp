// audiod.conf(5) documents each module's options exactly as the module's
// own option table says (the table its open checks keys against): every
// key, its type, its default and its range, and nothing else.
#include "unit/manual_page.h"
#include "unit/modules/module_tables.h"

#include <boost/test/unit_test.hpp>

#include <set>
#include <span>
#include <string>

using namespace audiod;
using namespace audiod::test;

namespace {

ManualKeys module_manual() {
    return read_manual_keys(std::string(AUDIOD_SOURCE_DIR) + "/doc/man/audiod.conf.5");
}

// The page calls an enum a string, and writes a range as "LO to HI".
std::string manual_type(const std::string& type) {
    return type == "enum" ? "string" : type;
}

void check_table(const ManualKeys& page, const std::string& section,
                 std::span<const audiod_option_spec> specs) {
    std::set<std::string> documented;
    for (const auto& [where, key] : page) {
        if (where.first == section) {
            documented.insert(where.second);
        }
    }
    for (const audiod_option_spec& spec : specs) {
        const std::string key = spec.key;
        const auto it = page.find({section, key});
        if (it == page.end()) {
            BOOST_ERROR("audiod.conf(5) has no " << key << " under \"" << section << "\"");
            continue;
        }
        documented.erase(key);
        const std::string& said = it->second.summary;
        BOOST_TEST_CONTEXT(section << " " << key << ": \"" << said << "\"") {
            BOOST_CHECK_MESSAGE(said.rfind(manual_type(spec.type), 0) == 0,
                                "not documented as " << spec.type);
            if (spec.default_value != nullptr) {
                BOOST_CHECK_MESSAGE(said.find(std::string("default ") + spec.default_value) !=
                                        std::string::npos,
                                    "no default " << spec.default_value);
            }
            const std::string range = spec.range;
            if (const size_t dots = range.find(".."); dots != std::string::npos) {
                const std::string words = range.substr(0, dots) + " to " + range.substr(dots + 2);
                BOOST_CHECK_MESSAGE(said.find(words) != std::string::npos, "no range " << words);
            } else if (!range.empty()) {
                size_t from = 0;
                while (from <= range.size()) {
                    const size_t bar = std::min(range.find('|', from), range.size());
                    const std::string value = range.substr(from, bar - from);
                    BOOST_CHECK_MESSAGE(said.find(value) != std::string::npos,
                                        "no value " << value);
                    from = bar + 1;
                }
            }
        }
    }
    for (const std::string& extra : documented) {
        BOOST_ERROR("audiod.conf(5) documents " << extra << " under \"" << section
                                                << "\", which the module does not take");
    }
}

} // namespace

BOOST_AUTO_TEST_SUITE(manual_options)

BOOST_AUTO_TEST_CASE(every_module_option_is_documented_as_its_table_says) {
    const ManualKeys page = module_manual();
    for (const char* type : kModuleTypes) {
        const audiod_module& module = load_module(type);
        if (module.sink != nullptr) {
            check_table(page, std::string(type) + " sink", sink_option_specs(module));
        }
        if (module.source != nullptr) {
            check_table(page, std::string(type) + " source", source_option_specs(module));
        }
    }
}

BOOST_AUTO_TEST_CASE(the_manual_has_a_section_for_each_module_direction_and_no_other) {
    std::set<std::string> expected;
    for (const char* type : kModuleTypes) {
        const audiod_module& module = load_module(type);
        if (module.sink != nullptr) {
            expected.insert(std::string(type) + " sink");
        }
        if (module.source != nullptr) {
            expected.insert(std::string(type) + " source");
        }
    }
    std::set<std::string> documented;
    for (const auto& [where, key] : module_manual()) {
        if (where.first.front() != '[') {
            documented.insert(where.first);
        }
    }
    // A module without options may have a section without keys (null).
    for (const std::string& section : documented) {
        BOOST_CHECK_MESSAGE(expected.count(section) != 0, "audiod.conf(5) documents options of \""
                                                              << section
                                                              << "\", which no module has");
    }
}

BOOST_AUTO_TEST_SUITE_END()
