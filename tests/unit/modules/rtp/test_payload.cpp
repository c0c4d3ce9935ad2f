// Linear PCM on the wire is big-endian (RFC 3551 §4.5.11, RFC 3190).
#include "payload.h"

#include <boost/test/unit_test.hpp>

#include <climits>
#include <vector>

using namespace audiod::rtp;

BOOST_AUTO_TEST_SUITE(payload)

BOOST_AUTO_TEST_CASE(l16_is_big_endian_and_round_trips) {
    const std::vector<int16_t> in = {0x1234, -2, 32767, -32768};
    std::vector<uint8_t> wire(in.size() * 2);
    pack_l16(in.data(), in.size(), wire.data());
    const std::vector<uint8_t> expected = {0x12, 0x34, 0xff, 0xfe, 0x7f, 0xff, 0x80, 0x00};
    BOOST_CHECK_EQUAL_COLLECTIONS(wire.begin(), wire.end(), expected.begin(), expected.end());
    std::vector<int16_t> back(in.size());
    unpack_l16(wire.data(), in.size(), back.data());
    BOOST_CHECK_EQUAL_COLLECTIONS(back.begin(), back.end(), in.begin(), in.end());
}

BOOST_AUTO_TEST_CASE(l24_is_the_top_24_bits_big_endian) {
    const std::vector<int32_t> in = {0x12345678, -256, INT32_MIN};
    std::vector<uint8_t> wire(in.size() * 3);
    pack_l24(in.data(), in.size(), wire.data());
    const std::vector<uint8_t> expected = {0x12, 0x34, 0x56, 0xff, 0xff, 0xff, 0x80, 0, 0};
    BOOST_CHECK_EQUAL_COLLECTIONS(wire.begin(), wire.end(), expected.begin(), expected.end());
    std::vector<int32_t> back(in.size());
    unpack_l24(wire.data(), in.size(), back.data());
    const std::vector<int32_t> truncated = {0x12345600, -256, INT32_MIN};
    BOOST_CHECK_EQUAL_COLLECTIONS(back.begin(), back.end(), truncated.begin(), truncated.end());
}

BOOST_AUTO_TEST_CASE(encoding_names) {
    BOOST_CHECK_EQUAL(encoding_name(Encoding::opus), std::string("OPUS"));
    BOOST_CHECK(parse_encoding("opus") == Encoding::opus);
    BOOST_CHECK(parse_encoding("Opus") == Encoding::opus);
    BOOST_CHECK(parse_encoding("L16") == Encoding::l16);
    BOOST_CHECK(parse_encoding("l24") == Encoding::l24);
    BOOST_CHECK(!parse_encoding("l8"));
    BOOST_CHECK(!parse_encoding("opusx"));
    BOOST_CHECK(!parse_encoding(""));
    BOOST_CHECK_EQUAL(pcm_sample_bytes(Encoding::l24), 3u);
}

BOOST_AUTO_TEST_SUITE_END()
