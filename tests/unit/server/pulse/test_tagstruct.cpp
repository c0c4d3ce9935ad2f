// The tag-struct reader and writer (pulse/tagstruct.h): every type written
// as the protocol lays it out, byte for byte, read back, and hostile
// packets refused without reading past them.
#include "pulse/tagstruct.h"

#include <boost/test/unit_test.hpp>

#include <vector>

using namespace audiod::pulse;

namespace {

using Bytes = std::vector<uint8_t>;

} // namespace

BOOST_AUTO_TEST_SUITE(tagstruct)

BOOST_AUTO_TEST_CASE(values_are_laid_out_as_the_protocol_says) {
    TagWriter w;
    w.put_u32(0x01020304)
        .put_u8(7)
        .put_bool(true)
        .put_bool(false)
        .put_string("ab")
        .put_null_string();
    w.put_sample_spec({3, 2, 48000});
    const Bytes expected = {'L', 1, 2,   3,   4, 'B', 7, '1', '0',  't', 'a',
                            'b', 0, 'N', 'a', 3, 2,   0, 0,   0xbb, 0x80};
    BOOST_CHECK(w.bytes() == expected);

    TagWriter p;
    PropertyList props;
    set_property(props, "application.name", "x");
    p.put_proplist(props);
    // 'P', then the key, its length as a u32, the value as arbitrary bytes
    // (the length again), and a null string to end.
    Bytes list = {'P', 't'};
    const std::string key = "application.name";
    list.insert(list.end(), key.begin(), key.end());
    list.insert(list.end(), {0, 'L', 0, 0, 0, 2, 'x', 0, 0, 0, 2, 'x', 0, 'N'});
    BOOST_CHECK(p.bytes() == list);
}

BOOST_AUTO_TEST_CASE(what_is_written_reads_back) {
    PropertyList props;
    set_property(props, "media.name", "Music");
    props["binary"] = {0, 1, 2, 255};
    TagWriter w;
    w.put_u32(42).put_u64(1ull << 40).put_s64(-5).put_usec(123456789).put_string("héllo");
    w.put_channel_map({{1, 2}}).put_channel_volumes({{0x10000, 0x8000}}).put_volume(0x10000);
    w.put_timeval({1, 2}).put_proplist(props).put_format_info({1, props});
    w.put_arbitrary(Bytes{9, 8, 7});

    TagReader r(w.bytes());
    uint32_t u32 = 0;
    uint64_t u64 = 0;
    int64_t s64 = 0;
    uint64_t usec = 0;
    std::string text;
    ChannelMap map;
    ChannelVolumes volumes;
    uint32_t volume = 0;
    Timeval tv;
    PropertyList read_props;
    FormatInfo format;
    Bytes blob;
    r.get_u32(u32);
    r.get_u64(u64);
    r.get_s64(s64);
    r.get_usec(usec);
    r.get_string(text);
    r.get_channel_map(map);
    r.get_channel_volumes(volumes);
    r.get_volume(volume);
    r.get_timeval(tv);
    r.get_proplist(read_props);
    r.get_format_info(format);
    r.get_arbitrary(blob, 16);
    BOOST_REQUIRE(r.done());
    BOOST_CHECK_EQUAL(u32, 42u);
    BOOST_CHECK_EQUAL(u64, 1ull << 40);
    BOOST_CHECK_EQUAL(s64, -5);
    BOOST_CHECK_EQUAL(usec, 123456789u);
    BOOST_CHECK_EQUAL(text, "héllo");
    BOOST_CHECK((map.positions == Bytes{1, 2}));
    BOOST_CHECK((volumes.values == std::vector<uint32_t>{0x10000, 0x8000}));
    BOOST_CHECK_EQUAL(volume, 0x10000u);
    BOOST_CHECK_EQUAL(tv.microseconds, 2u);
    BOOST_CHECK(read_props == props);
    BOOST_CHECK_EQUAL(format.encoding, 1u);
    BOOST_CHECK(format.properties == props);
    BOOST_CHECK((blob == Bytes{9, 8, 7}));
    BOOST_CHECK_EQUAL(property_string(read_props, "media.name").value_or("?"), "Music");
    BOOST_CHECK(!property_string(read_props, "binary")); // not a string
    BOOST_CHECK(!property_string(read_props, "absent"));
}

BOOST_AUTO_TEST_CASE(a_wrong_type_fails_the_reader_for_good) {
    TagWriter w;
    w.put_u8(1).put_u32(2);
    TagReader r(w.bytes());
    uint32_t value = 0;
    BOOST_CHECK(!r.get_u32(value)); // a u8 is next
    uint8_t small = 0;
    BOOST_CHECK(!r.get_u8(small)); // and nothing reads after a failure
    BOOST_CHECK(!r.ok());
    BOOST_CHECK_EQUAL(r.peek_type(), -1);
}

BOOST_AUTO_TEST_CASE(hostile_packets_are_refused_without_reading_past_them) {
    const auto refused = [](const Bytes& bytes, auto&& read) {
        TagReader r(bytes);
        return !read(r);
    };
    std::string s;
    // A string with no NUL before the end of the packet.
    BOOST_CHECK(refused({'t', 'a', 'b'}, [&](TagReader& r) { return r.get_string(s); }));
    // A null string where a string must be.
    BOOST_CHECK(refused({'N'}, [&](TagReader& r) { return r.get_string(s); }));
    // A truncated u32, u64.
    uint32_t u32 = 0;
    uint64_t u64 = 0;
    BOOST_CHECK(refused({'L', 0, 0}, [&](TagReader& r) { return r.get_u32(u32); }));
    BOOST_CHECK(refused({'R', 0, 0, 0, 0, 0}, [&](TagReader& r) { return r.get_u64(u64); }));
    // Arbitrary bytes longer than the packet, or than allowed.
    Bytes blob;
    BOOST_CHECK(refused({'x', 0xff, 0xff, 0xff, 0xff, 1},
                        [&](TagReader& r) { return r.get_arbitrary(blob, 1 << 20); }));
    BOOST_CHECK(refused({'x', 0, 0, 0, 3, 1, 2, 3},
                        [&](TagReader& r) { return r.get_arbitrary(blob, 2); }));
    // A channel map of 33 channels, or longer than its count says.
    ChannelMap map;
    Bytes big = {'m', 33};
    big.resize(2 + 33, 1);
    BOOST_CHECK(refused(big, [&](TagReader& r) { return r.get_channel_map(map); }));
    BOOST_CHECK(refused({'m', 4, 1, 2}, [&](TagReader& r) { return r.get_channel_map(map); }));
    ChannelVolumes volumes;
    BOOST_CHECK(refused({'v', 2, 0, 1, 0, 0},
                        [&](TagReader& r) { return r.get_channel_volumes(volumes); }));
    // A property whose two lengths disagree, an invalid key, no end.
    PropertyList props;
    BOOST_CHECK(refused({'P', 't', 'k', 0, 'L', 0, 0, 0, 3, 'x', 0, 0, 0, 2, 'a', 0, 'N'},
                        [&](TagReader& r) { return r.get_proplist(props); }));
    BOOST_CHECK(refused({'P', 't', 0, 'L', 0, 0, 0, 2, 'x', 0, 0, 0, 2, 'a', 0, 'N'},
                        [&](TagReader& r) { return r.get_proplist(props); }));
    BOOST_CHECK(refused({'P', 't', 'k', 0, 'L', 0, 0, 0, 2, 'x', 0, 0, 0, 2, 'a', 0},
                        [&](TagReader& r) { return r.get_proplist(props); }));
    // A value over the property limit.
    BOOST_CHECK(refused({'P', 't', 'k', 0, 'L', 0, 2, 0, 0, 'x', 0, 2, 0, 0},
                        [&](TagReader& r) { return r.get_proplist(props); }));
    // An empty packet, a boolean that is neither.
    bool flag = false;
    BOOST_CHECK(refused({}, [&](TagReader& r) { return r.get_bool(flag); }));
    BOOST_CHECK(refused({'2'}, [&](TagReader& r) { return r.get_bool(flag); }));
}

BOOST_AUTO_TEST_CASE(a_written_string_ends_at_its_first_nul) {
    TagWriter w;
    w.put_string(std::string("ab\0cd", 5));
    TagReader r(w.bytes());
    std::string s;
    BOOST_REQUIRE(r.get_string(s));
    BOOST_CHECK(r.done());
    BOOST_CHECK_EQUAL(s, "ab");
}

// An empty channel map or volume list has no storage to copy into (a
// null pointer that UBSan caught under memcpy, with nothing to copy).
BOOST_AUTO_TEST_CASE(empty_maps_and_lists_read_back_empty) {
    TagWriter w;
    w.put_channel_map({}).put_channel_volumes({}).put_arbitrary({});
    TagReader r(w.bytes());
    ChannelMap map{{1}};
    ChannelVolumes volumes{{7}};
    std::vector<uint8_t> bytes{1};
    BOOST_CHECK(r.get_channel_map(map));
    BOOST_CHECK(r.get_channel_volumes(volumes));
    BOOST_CHECK(r.get_arbitrary(bytes, 16));
    BOOST_CHECK(r.done());
    BOOST_CHECK(map.positions.empty());
    BOOST_CHECK(volumes.values.empty());
    BOOST_CHECK(bytes.empty());
}

BOOST_AUTO_TEST_SUITE_END()
