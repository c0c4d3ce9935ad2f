// CREATE_PLAYBACK_STREAM as real clients send it (paplay's and pacat's
// recorded bytes, libpulse 16) and as no client should (pulse/stream_request.h).
#include "pulse/session.h"
#include "pulse/stream_request.h"

#include "unit/server/pulse/recorded_session.h"

#include <boost/test/unit_test.hpp>

#include <fstream>
#include <iterator>

using namespace audiod::pulse;

namespace {

// Reads the session's CREATE_PLAYBACK_STREAM or CREATE_RECORD_STREAM, if
// it sends one.
struct CreateReader : CommandHandler {
    std::optional<PlaybackRequest> request;
    std::optional<RecordRequest> record;
    bool seen = false;
    bool on_command(Session& session, Command command, uint32_t, TagReader& fields) override {
        if (command == Command::create_playback_stream) {
            seen = true;
            request = read_playback_request(fields, session.version());
        } else if (command == Command::create_record_stream) {
            seen = true;
            record = read_record_request(fields, session.version());
        }
        return false;
    }
    bool on_audio(Session&, const Audio&) override { return false; }
};

// The fields of a v35 request for s16le stereo at 44.1 kHz.
TagWriter v35_request(uint8_t format_count) {
    TagWriter w;
    w.put_sample_spec({3, 2, 44100}).put_channel_map({{1, 2}});
    w.put_u32(kInvalidIndex).put_null_string();
    w.put_u32(kDefaultAttribute).put_bool(false);
    w.put_u32(3528).put_u32(kDefaultAttribute).put_u32(kDefaultAttribute).put_u32(0);
    w.put_channel_volumes({{0x10000, 0x10000}});
    for (int i = 0; i < 7; ++i) {
        w.put_bool(false); // v12
    }
    PropertyList properties;
    set_property(properties, "media.name", "test");
    w.put_bool(false).put_bool(true).put_proplist(properties); // v13
    w.put_bool(true).put_bool(false);                          // v14
    w.put_bool(false).put_bool(false).put_bool(false);         // v15
    w.put_bool(false);                                         // v17
    w.put_bool(false);                                         // v18
    w.put_u8(format_count);                                    // v21
    return w;
}

} // namespace

BOOST_AUTO_TEST_SUITE(pulse_stream_request)

BOOST_AUTO_TEST_CASE(paplay_and_pacat_requests_are_read_whole) {
    for (const char* name : {"paplay", "pacat_20ms"}) {
        BOOST_TEST_CONTEXT(name) {
            CreateReader handler;
            Session session(1, handler);
            session.receive(audiod::test::recorded_session(name));
            BOOST_REQUIRE(handler.seen);
            BOOST_REQUIRE(handler.request);
            const PlaybackRequest& r = *handler.request;
            BOOST_CHECK_EQUAL(r.spec.channels, 2u);
            BOOST_CHECK_EQUAL(r.map.positions.size(), 2u);
            BOOST_CHECK(r.properties.count("media.name") == 1);
            BOOST_CHECK(r.formats.empty()); // pa_stream_new: the sample spec says it
        }
    }
}

BOOST_AUTO_TEST_CASE(parecs_request_is_read_whole) {
    CreateReader handler;
    Session session(1, handler);
    session.receive(audiod::test::recorded_session("parec_monitor"));
    BOOST_REQUIRE(handler.seen);
    BOOST_REQUIRE(handler.record);
    BOOST_CHECK_EQUAL(handler.record->spec.channels, 2u);
    BOOST_CHECK(handler.record->source_name.value_or("").find(".monitor") != std::string::npos);
}

BOOST_AUTO_TEST_CASE(the_version_decides_which_fields_come) {
    const TagWriter w = v35_request(0);
    TagReader fields(w.bytes());
    const auto r = read_playback_request(fields, 35);
    BOOST_REQUIRE(r);
    BOOST_CHECK_EQUAL(r->spec.rate, 44100u);
    BOOST_CHECK_EQUAL(r->attributes.tlength, 3528u);
    BOOST_CHECK(r->adjust_latency);
    BOOST_CHECK(r->volume_set);
    // The same bytes read as version 20 leave the format count unread.
    TagReader old(w.bytes());
    BOOST_CHECK(!read_playback_request(old, 20));
}

BOOST_AUTO_TEST_CASE(short_long_or_mistyped_requests_are_refused) {
    const std::vector<uint8_t> whole = v35_request(0).bytes();
    for (size_t cut = 0; cut < whole.size(); ++cut) {
        TagReader fields(std::span<const uint8_t>(whole).first(cut));
        BOOST_CHECK(!read_playback_request(fields, 35));
    }
    std::vector<uint8_t> longer = whole;
    longer.push_back('0');
    TagReader extra(longer);
    BOOST_CHECK(!read_playback_request(extra, 35));
    // A format count the bytes do not back.
    const TagWriter counted = v35_request(3);
    TagReader missing(counted.bytes());
    BOOST_CHECK(!read_playback_request(missing, 35));
}

BOOST_AUTO_TEST_CASE(pulse_volumes_are_cubic) {
    BOOST_CHECK_CLOSE(linear_gain({{0x10000, 0x10000}}), 1.0f, 1e-4);
    BOOST_CHECK_CLOSE(linear_gain({{0x8000}}), 0.125f, 1e-4);
    BOOST_CHECK_EQUAL(linear_gain({{0, 0}}), 0.0f);
    BOOST_CHECK_EQUAL(linear_gain({}), 1.0f);
    BOOST_CHECK_LE(linear_gain({{0xffffffffu}}), 4.0f);
}

BOOST_AUTO_TEST_SUITE_END()
