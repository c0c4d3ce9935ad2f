// The sample cache: uploads kept by name, on their user's shelf, within
// their limits (pulse/sample_cache.h).
#include "pulse/sample_cache.h"

#include <boost/test/unit_test.hpp>

using namespace audiod;
using namespace audiod::pulse;

namespace {

Upload upload(const std::string& name, size_t bytes) {
    Upload u;
    u.name = name;
    u.spec = SampleSpec{3 /* s16le */, 2, 48000};
    u.map.positions = {1, 2};
    u.length = static_cast<uint32_t>(bytes);
    u.append(std::vector<uint8_t>(bytes, 7));
    return u;
}

} // namespace

BOOST_AUTO_TEST_SUITE(pulse_sample_cache)

BOOST_AUTO_TEST_CASE(an_upload_takes_no_more_than_it_announced) {
    Upload u;
    u.length = 4;
    u.append(std::vector<uint8_t>{1, 2, 3});
    u.append(std::vector<uint8_t>{4, 5, 6});
    BOOST_CHECK(u.audio == (std::vector<uint8_t>{1, 2, 3, 4}));
}

BOOST_AUTO_TEST_CASE(samples_are_kept_by_name_and_a_replaced_one_keeps_its_index) {
    SampleCache cache;
    const auto click = cache.add(upload("click", 400), 1, 0);
    const auto bell = cache.add(upload("bell", 800), 2, 0);
    BOOST_REQUIRE(click && bell);
    BOOST_CHECK_NE(*click, *bell);
    BOOST_CHECK_EQUAL(cache.add(upload("click", 40), 1, 0).value_or(99), *click);
    BOOST_REQUIRE(cache.find(0, "click") != nullptr);
    BOOST_CHECK_EQUAL(cache.find(0, "click")->audio->size(), 40u);
    BOOST_CHECK(cache.find(0, *bell) == cache.find(0, "bell"));
    BOOST_CHECK_EQUAL(cache.bytes_of(1), 40u);
    BOOST_CHECK_EQUAL(cache.remove(0, "bell").value_or(99), *bell);
    BOOST_CHECK(!cache.remove(0, "bell"));
    BOOST_CHECK(cache.find(0, *bell) == nullptr);
    BOOST_CHECK_EQUAL(cache.on_shelf(0).size(), 1u);
}

BOOST_AUTO_TEST_CASE(each_user_has_a_shelf_that_no_other_reaches) {
    SampleCache cache;
    const auto mine = cache.add(upload("bell", 400), 1, 1000);
    const auto theirs = cache.add(upload("bell", 800), 2, 1001);
    BOOST_REQUIRE(mine && theirs);
    BOOST_CHECK_NE(*mine, *theirs); // two samples, not one replaced
    BOOST_CHECK_EQUAL(cache.find(1000, "bell")->audio->size(), 400u);
    BOOST_CHECK_EQUAL(cache.find(1001, "bell")->audio->size(), 800u);
    BOOST_CHECK(cache.find(1000, *theirs) == nullptr);
    BOOST_CHECK(cache.find(1002, "bell") == nullptr);
    BOOST_CHECK(!cache.remove(1002, "bell"));
    BOOST_REQUIRE_EQUAL(cache.on_shelf(1001).size(), 1u);
    BOOST_CHECK_EQUAL(cache.on_shelf(1001).front()->index, *theirs);
    BOOST_CHECK_EQUAL(cache.remove(1000, "bell").value_or(99), *mine);
    BOOST_CHECK(cache.find(1001, "bell") != nullptr);
}

BOOST_AUTO_TEST_CASE(uploads_are_refused_past_each_limit) {
    SampleCache cache;
    BOOST_CHECK_EQUAL(cache.may_upload(1, 0, 0), "a sample of 0 bytes (1 to 16777216)");
    BOOST_CHECK(!cache.may_upload(1, 0, SampleCache::kMaxSampleBytes + 1).empty());
    BOOST_CHECK(cache.may_upload(1, 0, SampleCache::kMaxSampleBytes).empty());
    // One client: what it holds and what it is uploading count together.
    BOOST_REQUIRE(cache.add(upload("a", SampleCache::kMaxSampleBytes), 1, 0));
    BOOST_CHECK(cache.may_upload(1, 0, SampleCache::kMaxSampleBytes).empty());
    BOOST_CHECK_EQUAL(cache.may_upload(1, 1, SampleCache::kMaxSampleBytes),
                      "the client would hold more than 32 MiB of samples");
    BOOST_CHECK(cache.may_upload(2, 1, SampleCache::kMaxSampleBytes).empty());
}

BOOST_AUTO_TEST_CASE(sample_entries_say_their_length_and_duration) {
    SampleCache cache;
    BOOST_REQUIRE(cache.add(upload("click", 48000 * 4 / 10), 1, 0)); // 100 ms
    for (const uint32_t version : {12u, 35u}) {
        TagWriter w;
        put_sample_info(w, *cache.find(0, "click"), version);
        TagReader r(w.bytes());
        uint32_t index = 0;
        std::string name;
        ChannelVolumes volume;
        uint64_t usec = 0;
        SampleSpec spec;
        ChannelMap map;
        uint32_t bytes = 0;
        bool lazy = true;
        std::optional<std::string> file;
        BOOST_REQUIRE(r.get_u32(index) && r.get_string(name) && r.get_channel_volumes(volume) &&
                      r.get_usec(usec) && r.get_sample_spec(spec) && r.get_channel_map(map) &&
                      r.get_u32(bytes) && r.get_bool(lazy) && r.get_string(file));
        BOOST_CHECK_EQUAL(name, "click");
        BOOST_CHECK_EQUAL(usec, 100000u);
        BOOST_CHECK_EQUAL(bytes, 19200u);
        BOOST_CHECK_EQUAL(volume.values.size(), 2u);
        BOOST_CHECK(!lazy && !file);
        if (version >= 13) {
            PropertyList properties;
            BOOST_CHECK(r.get_proplist(properties));
        }
        BOOST_CHECK(r.done());
    }
}

BOOST_AUTO_TEST_SUITE_END()
