// Framing (pulse/frame.h): frames come whole out of bytes cut anywhere,
// headers are checked before any payload is kept, and memory follows the
// bytes received.
#include "pulse/frame.h"
#include "pulse/tagstruct.h"

#include <boost/test/unit_test.hpp>

#include <fstream>
#include <iterator>
#include <string>
#include <vector>

using namespace audiod::pulse;

BOOST_AUTO_TEST_SUITE(frame)

BOOST_AUTO_TEST_CASE(frames_come_whole_however_the_bytes_are_cut) {
    std::vector<uint8_t> stream = frame_packet(std::vector<uint8_t>{1, 2, 3});
    const auto audio = frame_header(4, 7, -2, static_cast<uint32_t>(SeekMode::absolute));
    stream.insert(stream.end(), audio.begin(), audio.end());
    stream.insert(stream.end(), {9, 9, 9, 9});
    for (size_t piece = 1; piece <= stream.size(); ++piece) {
        FrameReader reader;
        for (size_t at = 0; at < stream.size(); at += piece) {
            const size_t n = std::min(piece, stream.size() - at);
            BOOST_REQUIRE(reader.feed(std::span(stream).subspan(at, n)));
        }
        const auto packet = reader.next();
        const auto samples = reader.next();
        BOOST_REQUIRE(packet && samples);
        BOOST_CHECK(packet->is_packet());
        BOOST_CHECK((packet->payload == std::vector<uint8_t>{1, 2, 3}));
        BOOST_CHECK_EQUAL(samples->channel, 7u);
        BOOST_CHECK_EQUAL(samples->offset, -2);
        BOOST_CHECK_EQUAL(samples->flags, 1u);
        BOOST_CHECK_EQUAL(samples->payload.size(), 4u);
        BOOST_CHECK(!reader.next());
        BOOST_CHECK_EQUAL(reader.pending_bytes(), 0u);
    }
}

BOOST_AUTO_TEST_CASE(bad_headers_end_the_connection) {
    const auto refused = [](std::array<uint8_t, kFrameHeaderBytes> header) {
        FrameReader reader(1024);
        return !reader.feed(header) && !reader.error().empty();
    };
    BOOST_CHECK(refused(frame_header(0)));                        // empty
    BOOST_CHECK(refused(frame_header(1025)));                     // over the limit
    BOOST_CHECK(refused(frame_header(4, 3, 0, 0x80000000u)));     // shared memory, not agreed
    BOOST_CHECK(refused(frame_header(4, kControlChannel, 0, 1))); // a packet with a seek mode
    // And once failed, a reader takes nothing more.
    FrameReader reader(1024);
    BOOST_CHECK(!reader.feed(frame_header(0)));
    BOOST_CHECK(!reader.feed(frame_packet(std::vector<uint8_t>{1})));
    BOOST_CHECK(!reader.next());
}

BOOST_AUTO_TEST_CASE(a_large_announced_frame_costs_only_what_arrives) {
    FrameReader reader;
    BOOST_REQUIRE(reader.feed(frame_header(kMaxFrameBytes, 5)));
    BOOST_REQUIRE(reader.feed(std::vector<uint8_t>(100, 1)));
    BOOST_CHECK_EQUAL(reader.pending_bytes(), 100u);
    BOOST_CHECK(!reader.next());
}

BOOST_AUTO_TEST_SUITE_END()

// What libpulse 16's pactl sent a PulseAudio 16 server (recorded through a
// proxy, tests/fuzz/corpus/pulse/pactl_info, after the fuzzer's cut byte):
// AUTH with the protocol version and a cookie, then SET_CLIENT_NAME.
BOOST_AUTO_TEST_SUITE(recorded)

BOOST_AUTO_TEST_CASE(pactl_info_frames_and_reads_as_auth_then_set_client_name) {
    std::ifstream in(std::string(AUDIOD_SOURCE_DIR) + "/tests/fuzz/corpus/pulse/pactl_info",
                     std::ios::binary);
    std::vector<uint8_t> bytes((std::istreambuf_iterator<char>(in)),
                               std::istreambuf_iterator<char>());
    BOOST_REQUIRE_GT(bytes.size(), 1u);
    FrameReader reader;
    BOOST_REQUIRE(reader.feed(std::span(bytes).subspan(1)));
    const auto auth = reader.next();
    BOOST_REQUIRE(auth && auth->is_packet());
    TagReader r(auth->payload);
    uint32_t command = 0;
    uint32_t tag = 0;
    uint32_t version = 0;
    std::vector<uint8_t> cookie;
    r.get_u32(command);
    r.get_u32(tag);
    r.get_u32(version);
    r.get_arbitrary(cookie, kCookieLength);
    BOOST_REQUIRE(r.done());
    BOOST_CHECK(static_cast<Command>(command) == Command::auth);
    BOOST_CHECK_EQUAL(version & kVersionMask, kVersion);
    BOOST_CHECK_EQUAL(version & (kShmFlag | kMemfdFlag), 0u); // recorded with SHM off
    BOOST_CHECK_EQUAL(cookie.size(), kCookieLength);

    const auto name = reader.next();
    BOOST_REQUIRE(name && name->is_packet());
    TagReader n(name->payload);
    PropertyList properties;
    n.get_u32(command);
    n.get_u32(tag);
    n.get_proplist(properties);
    BOOST_REQUIRE(n.done());
    BOOST_CHECK(static_cast<Command>(command) == Command::set_client_name);
    BOOST_CHECK_EQUAL(property_string(properties, "application.process.binary").value_or(""),
                      "pactl");
}

BOOST_AUTO_TEST_SUITE_END()
