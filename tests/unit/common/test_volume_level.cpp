#include "common/volume_level.h"

#include <boost/test/unit_test.hpp>

#include <cmath>
#include <string>

using audiod::format_volume;
using audiod::LevelMode;
using audiod::parse_volume_level;
using audiod::VolumeLevel;

namespace {

VolumeLevel parse_ok(std::string_view text) {
    auto parsed = parse_volume_level(text);
    if (const auto* error = std::get_if<std::string>(&parsed)) {
        BOOST_FAIL("'" << text << "' was refused: " << *error);
    }
    return std::get<VolumeLevel>(parsed);
}

std::string parse_error(std::string_view text) {
    auto parsed = parse_volume_level(text);
    if (const auto* level = std::get_if<VolumeLevel>(&parsed)) {
        BOOST_FAIL("'" << text << "' was accepted as mode " << static_cast<int>(level->mode)
                       << " value " << level->value);
    }
    return std::get<std::string>(parsed);
}

void check(std::string_view text, LevelMode mode, double value) {
    BOOST_TEST_CONTEXT("input '" << text << "'") {
        const VolumeLevel level = parse_ok(text);
        BOOST_TEST(static_cast<int>(level.mode) == static_cast<int>(mode));
        BOOST_TEST(std::abs(level.value - value) <= 1e-9, level.value << " != " << value);
    }
}

double db_to_linear(double db) {
    return std::pow(10.0, db / 20.0);
}

} // namespace

BOOST_AUTO_TEST_SUITE(volume_level)

BOOST_AUTO_TEST_CASE(absolute_percent_and_linear) {
    check("50%", LevelMode::absolute, 0.5);
    check("100%", LevelMode::absolute, 1.0);
    check("0%", LevelMode::absolute, 0.0);
    check("400%", LevelMode::absolute, 4.0);
    check("12.5%", LevelMode::absolute, 0.125);
    check("0.5", LevelMode::absolute, 0.5);
    check("1", LevelMode::absolute, 1.0);
    check("0", LevelMode::absolute, 0.0);
    check(".25", LevelMode::absolute, 0.25);
    check("4", LevelMode::absolute, 4.0);
    check("4.0", LevelMode::absolute, 4.0);
}

BOOST_AUTO_TEST_CASE(absolute_db) {
    check("0dB", LevelMode::absolute, 1.0);
    check("-6dB", LevelMode::absolute, 0.50118723362727224);
    check("-6dB", LevelMode::absolute, db_to_linear(-6.0));
    check("-20dB", LevelMode::absolute, 0.1);
    check("-40dB", LevelMode::absolute, 0.01);
    check("3dB", LevelMode::absolute, 1.4125375446227544);
    check("12dB", LevelMode::absolute, db_to_linear(12.0));
    check("-0.5dB", LevelMode::absolute, db_to_linear(-0.5));
    check("-6db", LevelMode::absolute, db_to_linear(-6.0));
    check("-6DB", LevelMode::absolute, db_to_linear(-6.0));
    check("-6Db", LevelMode::absolute, db_to_linear(-6.0));
    check("-6 dB", LevelMode::absolute, db_to_linear(-6.0));
    check("-200dB", LevelMode::absolute, 1e-10);
}

BOOST_AUTO_TEST_CASE(minus_infinity_db_is_silence) {
    check("-inf dB", LevelMode::absolute, 0.0);
    check("-infdB", LevelMode::absolute, 0.0);
    check("-INF DB", LevelMode::absolute, 0.0);
    BOOST_TEST(parse_ok("-inf dB").value == 0.0);
}

BOOST_AUTO_TEST_CASE(relative_steps) {
    check("+5%", LevelMode::relative_linear, 0.05);
    check("-5%", LevelMode::relative_linear, -0.05);
    check("+0.1", LevelMode::relative_linear, 0.1);
    check("-0.1", LevelMode::relative_linear, -0.1);
    check("+400%", LevelMode::relative_linear, 4.0);
    check("+3dB", LevelMode::relative_db, 3.0);
    check("+0.5dB", LevelMode::relative_db, 0.5);
    check("+3 db", LevelMode::relative_db, 3.0);
    // The explicit step forms: the only way down in dB.
    check("-=3dB", LevelMode::relative_db, -3.0);
    check("+=3dB", LevelMode::relative_db, 3.0);
    check("-=5%", LevelMode::relative_linear, -0.05);
    check("+=0.1", LevelMode::relative_linear, 0.1);
    parse_error("-=inf dB");
    parse_error("=3dB");
    parse_error("-==3dB");
}

BOOST_AUTO_TEST_CASE(surrounding_whitespace_is_ignored) {
    check(" 50% ", LevelMode::absolute, 0.5);
    check("\t+5%\n", LevelMode::relative_linear, 0.05);
    check("50 %", LevelMode::absolute, 0.5);
}

BOOST_AUTO_TEST_CASE(garbage_is_refused_with_the_accepted_forms) {
    BOOST_TEST(parse_error("12x") ==
               "invalid volume '12x': use 50%, 0.5, -6dB, +5%, +3dB or -=3dB");
    for (const char* text :
         {"",     " ",    "+",    "-",       "%",      "%%",    "50%%",  "dB",       "+dB",
          "-%",   "abc",  "50%x", "0.5.1",   "3dBx",   "3 d B", "1e3",   "1e-1",     "0x10",
          "nan",  "NaN%", "inf",  "+inf dB", "inf dB", "-inf",  "-inf%", "infinity", "-infinity dB",
          "--5%", "+-5%", "- 5%", "5-",      ".",      ".%",    "5,5",   "50% 1",    "½"}) {
        BOOST_TEST_CONTEXT("input '" << text << "'") {
            const std::string error = parse_error(text);
            BOOST_TEST(error.find("use 50%, 0.5, -6dB, +5%, +3dB or -=3dB") != std::string::npos);
        }
    }
}

BOOST_AUTO_TEST_CASE(too_loud_is_an_error_not_clamped) {
    BOOST_TEST(parse_error("401%").find("maximum") != std::string::npos);
    BOOST_TEST(parse_error("500%").find("maximum") != std::string::npos);
    BOOST_TEST(parse_error("4.01").find("maximum") != std::string::npos);
    BOOST_TEST(parse_error("50").find("maximum") != std::string::npos);
    BOOST_TEST(parse_error("13dB").find("maximum") != std::string::npos);
    BOOST_TEST(parse_error("12.05dB").find("maximum") != std::string::npos);
    // "+50" is almost certainly "+50%" mistyped; a step of 50.0 would blast.
    BOOST_TEST(parse_error("+50").find("larger than the whole range") != std::string::npos);
    BOOST_TEST(parse_error("-401%").find("larger than the whole range") != std::string::npos);
}

BOOST_AUTO_TEST_CASE(huge_numbers_are_refused) {
    const std::string huge = "1" + std::string(400, '0');
    parse_error(huge);
    parse_error("+" + huge + "dB");
    parse_error("-" + huge + "%");
}

BOOST_AUTO_TEST_CASE(format_volume_shows_percent_and_db) {
    BOOST_TEST(format_volume(0.5) == "50% (-6.0 dB)");
    BOOST_TEST(format_volume(1.0) == "100% (0.0 dB)");
    BOOST_TEST(format_volume(0.0) == "0% (-inf dB)");
    BOOST_TEST(format_volume(-1.0) == "0% (-inf dB)");
    BOOST_TEST(format_volume(std::nan("")) == "0% (-inf dB)");
    BOOST_TEST(format_volume(2.0) == "200% (+6.0 dB)");
    BOOST_TEST(format_volume(0.1) == "10% (-20.0 dB)");
    BOOST_TEST(format_volume(0.999) == "100% (0.0 dB)"); // -0.009 dB: no "-0.0"
    BOOST_TEST(format_volume(db_to_linear(3.0)) == "141% (+3.0 dB)");
}

BOOST_AUTO_TEST_CASE(format_then_parse_round_trip) {
    for (const double linear : {0.25, 0.5, 0.75, 1.0, 2.0, 4.0}) {
        const std::string text = format_volume(linear);
        const std::string percent = text.substr(0, text.find(' '));
        check(percent, LevelMode::absolute, linear);
    }
}

BOOST_AUTO_TEST_SUITE_END()
