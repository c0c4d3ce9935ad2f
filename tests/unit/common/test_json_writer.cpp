#include "common/json_writer.h"

#include <boost/test/unit_test.hpp>

#include <cmath>
#include <cstdlib>
#include <limits>
#include <string>

using audiod::JsonWriter;

namespace {

std::string json_quoted(std::string_view text) {
    std::string out;
    JsonWriter::append_quoted(out, text);
    return out;
}

// Is `text` well-formed UTF-8? Written independently of the writer's decoder
// (by code point ranges) so that the two check each other.
bool valid_utf8(std::string_view text) {
    size_t i = 0;
    while (i < text.size()) {
        const auto c = static_cast<unsigned char>(text[i]);
        size_t length = c < 0x80           ? 1
                        : (c >> 5) == 0x6  ? 2
                        : (c >> 4) == 0xE  ? 3
                        : (c >> 3) == 0x1E ? 4
                                           : 0;
        if (length == 0 || i + length > text.size()) {
            return false;
        }
        uint32_t code = length == 1 ? c : c & (0x7F >> length);
        for (size_t k = 1; k < length; ++k) {
            const auto next = static_cast<unsigned char>(text[i + k]);
            if ((next & 0xC0) != 0x80) {
                return false;
            }
            code = code << 6 | (next & 0x3F);
        }
        const uint32_t min_code[] = {0, 0, 0x80, 0x800, 0x10000};
        if (code < min_code[length] || code > 0x10FFFF || (code >= 0xD800 && code <= 0xDFFF)) {
            return false;
        }
        i += length;
    }
    return true;
}

const std::string kFffd = "\xEF\xBF\xBD";

} // namespace

BOOST_AUTO_TEST_SUITE(json_writer)

BOOST_AUTO_TEST_CASE(escapes_quotes_backslashes_and_controls) {
    BOOST_TEST(json_quoted("plain") == "\"plain\"");
    BOOST_TEST(json_quoted("") == "\"\"");
    BOOST_TEST(json_quoted("a\"b") == "\"a\\\"b\"");
    BOOST_TEST(json_quoted("a\\b") == "\"a\\\\b\"");
    BOOST_TEST(json_quoted("line\nnext\ttab\r") == "\"line\\u000anext\\u0009tab\\u000d\"");
    BOOST_TEST(json_quoted(std::string_view("nul\0x", 5)) == "\"nul\\u0000x\"");
    BOOST_TEST(json_quoted("\x1f\x7f") == "\"\\u001f\x7f\"");
    BOOST_TEST(json_quoted("a/b") == "\"a/b\"");
}

BOOST_AUTO_TEST_CASE(valid_utf8_passes_through) {
    const std::string text =
        "caf\xC3\xA9 \xE2\x82\xAC \xF0\x9F\x8E\xB5 \xEF\xBF\xBF \xF4\x8F\xBF\xBF";
    BOOST_TEST(json_quoted(text) == "\"" + text + "\"");
}

BOOST_AUTO_TEST_CASE(invalid_utf8_becomes_replacement_characters) {
    struct Case {
        std::string in;
        std::string out;
    };
    const Case cases[] = {
        {"\x80", kFffd},                                     // lone continuation
        {"a\xFFz", "a" + kFffd + "z"},                       // never valid
        {"\xC3", kFffd},                                     // truncated at the end
        {"\xC3z", kFffd + "z"},                              // truncated before ASCII
        {"\xC0\xAF", kFffd + kFffd},                         // overlong '/'
        {"\xE0\x80\xAF", kFffd + kFffd + kFffd},             // overlong, 3 bytes
        {"\xED\xA0\x80", kFffd + kFffd + kFffd},             // UTF-16 surrogate
        {"\xF4\x90\x80\x80", kFffd + kFffd + kFffd + kFffd}, // above U+10FFFF
        {"\xE2\x82", kFffd},                                 // one maximal prefix, one U+FFFD
        {"\xE2\x82z", kFffd + "z"},
        {"\xF0\x9F\x8E", kFffd},
        {"\xF0\x9F\x8E\"", kFffd + "\\\""}, // a quote is never swallowed
        {"\xF5\x80", kFffd + kFffd},
    };
    for (const Case& c : cases) {
        BOOST_TEST_CONTEXT("input of " << c.in.size() << " bytes") {
            BOOST_TEST(json_quoted(c.in) == "\"" + c.out + "\"");
        }
    }
}

BOOST_AUTO_TEST_CASE(every_byte_string_gives_valid_utf8) {
    // Deterministic noise, biased to the bytes that make UTF-8 hard.
    uint32_t seed = 12345;
    for (int round = 0; round < 2000; ++round) {
        std::string text;
        for (int i = 0; i < 16; ++i) {
            seed = seed * 1103515245 + 12345;
            const auto byte = static_cast<unsigned char>(seed >> 16);
            text += static_cast<char>(i % 3 == 0 ? byte | 0x80 : byte);
        }
        const std::string out = json_quoted(text);
        BOOST_TEST(valid_utf8(out));
        BOOST_TEST(out.front() == '"');
        BOOST_TEST(out.back() == '"');
    }
}

BOOST_AUTO_TEST_CASE(commas_and_nesting) {
    JsonWriter json;
    json.begin_object();
    json.key("name");
    json.value("sink \"a\"");
    json.key("rate");
    json.value(48000);
    json.key("channels");
    json.begin_array();
    json.value("FL");
    json.value("FR");
    json.end_array();
    json.key("empty_list");
    json.begin_array();
    json.end_array();
    json.key("empty_object");
    json.begin_object();
    json.end_object();
    json.key("streams");
    json.begin_array();
    json.begin_object();
    json.key("id");
    json.value(uint64_t{1});
    json.key("muted");
    json.value(false);
    json.end_object();
    json.begin_object();
    json.key("id");
    json.value(uint64_t{2});
    json.key("muted");
    json.value(true);
    json.key("peer");
    json.null();
    json.end_object();
    json.end_array();
    json.end_object();
    BOOST_TEST(json.str() ==
               R"({"name":"sink \"a\"","rate":48000,"channels":["FL","FR"],"empty_list":[],)"
               R"("empty_object":{},"streams":[{"id":1,"muted":false},)"
               R"({"id":2,"muted":true,"peer":null}]})");
}

BOOST_AUTO_TEST_CASE(top_level_array_of_scalars) {
    JsonWriter json;
    json.begin_array();
    json.value(true);
    json.null();
    json.value(-1);
    json.value(2u);
    json.value(size_t{3});
    json.value(0.5);
    json.end_array();
    BOOST_TEST(json.str() == "[true,null,-1,2,3,0.5]");
}

BOOST_AUTO_TEST_CASE(keys_are_escaped_too) {
    JsonWriter json;
    json.begin_object();
    json.key("we\"ird\n\xFF");
    json.value(int64_t{0});
    json.end_object();
    BOOST_TEST(json.str() == "{\"we\\\"ird\\u000a" + kFffd + "\":0}");
}

BOOST_AUTO_TEST_CASE(integers_at_their_limits) {
    JsonWriter json;
    json.begin_array();
    json.value(std::numeric_limits<int64_t>::min());
    json.value(std::numeric_limits<int64_t>::max());
    json.value(std::numeric_limits<uint64_t>::max());
    json.value(0);
    json.end_array();
    BOOST_TEST(json.str() == "[-9223372036854775808,9223372036854775807,18446744073709551615,0]");
}

BOOST_AUTO_TEST_CASE(doubles_round_trip_and_non_finite_is_null) {
    const double values[] = {
        0.1,           -2.5, 1.0 / 3.0, 1e300, -1e-300, 5e-324, std::numeric_limits<double>::max(),
        123456789.125, 0.0};
    for (const double v : values) {
        JsonWriter json;
        json.value(v);
        const std::string& text = json.str();
        BOOST_TEST_CONTEXT("text " << text) {
            BOOST_TEST(std::strtod(text.c_str(), nullptr) == v);
            // JSON numbers: no "inf", "nan", leading '+' or bare '.'.
            BOOST_TEST(text.find_first_not_of("0123456789.eE+-") == std::string::npos);
            BOOST_TEST(text.front() != '+');
            BOOST_TEST(text.front() != '.');
        }
    }
    JsonWriter json;
    json.begin_array();
    json.value(std::numeric_limits<double>::infinity());
    json.value(-std::numeric_limits<double>::infinity());
    json.value(std::nan(""));
    json.value(1.5f);
    json.end_array();
    BOOST_TEST(json.str() == "[null,null,null,1.5]");
}

BOOST_AUTO_TEST_SUITE_END()
