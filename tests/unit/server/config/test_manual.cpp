// audiod.conf(5) documents exactly the keys the parser and the engine
// accept (config/config_keys.h), each with its type and, for an integer,
// its range: the manual cannot drift from the code.
#include "config/config_keys.h"
#include "unit/manual_page.h"

#include <boost/test/unit_test.hpp>

#include <set>

using namespace audiod;
using namespace audiod::test;

namespace {

ManualKeys configuration_manual() {
    return read_manual_keys(std::string(AUDIOD_SOURCE_DIR) + "/doc/man/audiod.conf.5");
}

} // namespace

BOOST_AUTO_TEST_SUITE(manual)

BOOST_AUTO_TEST_CASE(every_configuration_key_is_documented_with_its_type_and_range) {
    const ManualKeys page = configuration_manual();
    for (const ConfigKey& key : config_keys()) {
        const std::string section = "[" + std::string(key.table) + "]";
        const auto it = page.find({section, std::string(key.key)});
        if (it == page.end()) {
            BOOST_ERROR("audiod.conf(5) has no " << key.key << " in " << section);
            continue;
        }
        const std::string& summary = it->second.summary;
        BOOST_CHECK_MESSAGE(summary.rfind(std::string(key.type), 0) == 0,
                            section << " " << key.key << " is documented as \"" << summary
                                    << "\", not as " << key.type);
        if (key.type == "integer") {
            const std::string range = std::to_string(key.min) + " to " + std::to_string(key.max);
            BOOST_CHECK_MESSAGE(summary.find(range) != std::string::npos,
                                section << " " << key.key << ": \"" << summary
                                        << "\" does not give its range " << range);
        }
    }
}

BOOST_AUTO_TEST_CASE(the_manual_documents_no_key_the_parser_refuses) {
    const ManualKeys page = configuration_manual();
    std::set<std::pair<std::string, std::string>> known;
    for (const ConfigKey& key : config_keys()) {
        known.insert({"[" + std::string(key.table) + "]", std::string(key.key)});
    }
    size_t tables = 0;
    for (const auto& [where, key] : page) {
        if (where.first.front() != '[') {
            continue; // a module's options (MODULE OPTIONS)
        }
        ++tables;
        BOOST_CHECK_MESSAGE(known.count(where) != 0, "audiod.conf(5) documents "
                                                         << where.second << " in " << where.first
                                                         << ", which the parser does not take");
    }
    BOOST_CHECK_EQUAL(tables, known.size());
}

BOOST_AUTO_TEST_SUITE_END()
