// The TOML pre-check that keeps toml++ away from its undefined behaviour:
// non-ASCII only where TOML allows it, with the line of any refusal.
#include "config/config.h"
#include "config/toml_guard.h"

#include <boost/test/unit_test.hpp>

using namespace audiod;

BOOST_AUTO_TEST_SUITE(toml_guard)

BOOST_AUTO_TEST_CASE(non_ascii_in_strings_and_comments_is_fine) {
    BOOST_CHECK(!check_toml_text("# caf\xc3\xa9\npath = \"/tmp/caf\xc3\xa9.wav\"\n"));
    BOOST_CHECK(!check_toml_text("[apps.\"\xe2\x99\xab\"]\nx = 'lit\xc3\xa9ral'\n"));
    BOOST_CHECK(!check_toml_text("x = '''multi\n\xc3\xa9\n'''\n"));
    BOOST_CHECK(!check_toml_text("x = \"quote \\\" then \xc3\xa9\"\n"));
}

BOOST_AUTO_TEST_CASE(non_ascii_elsewhere_is_refused_with_its_line) {
    auto e = check_toml_text("a = 1\nk\xc3\xa9y = 2\n");
    BOOST_REQUIRE(e);
    BOOST_CHECK_EQUAL(e->line, 2u);
    BOOST_CHECK_EQUAL(e->reason, "non-ASCII character outside a string");
    e = check_toml_text("x = 1\xc2\xa1\n");
    BOOST_REQUIRE(e);
    e = check_toml_text("x = \"a\\\xc3\xa9\"\n");
    BOOST_REQUIRE(e);
    BOOST_CHECK_EQUAL(e->reason, "invalid escape sequence");
    e = check_toml_text("x = \"\"\"\nline\n\xc3\xa9\"\"\"\n");
    BOOST_REQUIRE(e);
    BOOST_CHECK_EQUAL(e->line, 3u);
    // A string that ends at its line does not hide later text.
    e = check_toml_text("x = \"open\n\xc3\xa9 = 1\n");
    BOOST_REQUIRE(e);
    BOOST_CHECK_EQUAL(e->line, 2u);
}

BOOST_AUTO_TEST_CASE(the_config_reports_it_as_a_syntax_error) {
    const auto result = parse_config("[sinks.a]\ntype = \"null\"\n\xc2\xa0 = 1\n", "g.conf");
    BOOST_REQUIRE(std::holds_alternative<std::string>(result));
    BOOST_CHECK_EQUAL(std::get<std::string>(result),
                      "g.conf:3: syntax error: non-ASCII character outside a string");
}

BOOST_AUTO_TEST_SUITE_END()
