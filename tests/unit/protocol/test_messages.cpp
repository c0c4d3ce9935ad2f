// Wire format: every message survives a round trip, and every malformed
// input — truncated at any byte, with trailing bytes, lying lengths, invalid
// booleans — is rejected rather than misread.
#include "protocol/messages.h"

#include <boost/test/unit_test.hpp>

#include <cmath>
#include <cstring>

using namespace audiod::proto;

namespace {

SinkInfo sample_sink(int i) {
    SinkInfo s;
    s.name = "sink" + std::to_string(i);
    s.type = "file";
    s.rate = 48000;
    s.channels = 2;
    s.quantum = 64;
    s.format = 2;
    s.volume = 0.5f;
    s.muted = true;
    s.is_default = i == 0;
    s.frames = 1ull << 40;
    s.xruns = 3;
    s.streams = 7;
    s.state = "running";
    return s;
}

StreamInfo sample_stream(int i) {
    StreamInfo s;
    s.id = 100 + i;
    s.client_id = 9;
    s.pid = 4242;
    s.app = "mpv \xe2\x99\xab";
    s.device = "main";
    s.state = "paused";
    s.volume = 0.25f;
    s.xruns = 12;
    s.format = 6;
    s.rate = 44100;
    s.channels = 6;
    s.buffer_frames = 4410;
    s.position = 123456789;
    return s;
}

template <class M>
M round_trip(const M& in, uint32_t seq = 77) {
    const auto bytes = encode(seq, in);
    const auto envelope = parse_envelope(bytes);
    BOOST_REQUIRE(envelope);
    BOOST_CHECK(envelope->type == M::kType);
    BOOST_CHECK_EQUAL(envelope->seq, seq);
    M out;
    BOOST_REQUIRE(decode(envelope->body, out));
    return out;
}

// Every strict prefix of a valid body must fail to decode.
template <class M>
void check_truncations(const M& message) {
    const auto bytes = encode(1, message);
    const std::span<const uint8_t> body(bytes.data() + kEnvelopeBytes,
                                        bytes.size() - kEnvelopeBytes);
    for (size_t n = 0; n < body.size(); ++n) {
        M out;
        BOOST_CHECK_MESSAGE(!decode(body.first(n), out),
                            "prefix of " << n << "/" << body.size() << " bytes accepted");
    }
    // And one extra byte is rejected too.
    std::vector<uint8_t> longer(body.begin(), body.end());
    longer.push_back(0);
    M out;
    BOOST_CHECK(!decode(longer, out));
}

} // namespace

BOOST_AUTO_TEST_SUITE(messages)

BOOST_AUTO_TEST_CASE(hello_round_trip) {
    Hello h;
    h.app_name = "player";
    const Hello out = round_trip(h);
    BOOST_CHECK_EQUAL(out.version, kProtocolVersion);
    BOOST_CHECK_EQUAL(out.app_name, "player");
    check_truncations(h);
}

BOOST_AUTO_TEST_CASE(create_stream_round_trip) {
    CreateStream c;
    c.format = 6;
    c.rate = 96000;
    c.channels = 8;
    c.buffer_frames = 12345;
    c.device = "headphones";
    c.volume = 0.125f;
    const CreateStream out = round_trip(c);
    BOOST_CHECK_EQUAL(out.format, 6u);
    BOOST_CHECK_EQUAL(out.rate, 96000u);
    BOOST_CHECK_EQUAL(out.channels, 8u);
    BOOST_CHECK_EQUAL(out.buffer_frames, 12345u);
    BOOST_CHECK_EQUAL(out.device, "headphones");
    BOOST_CHECK_EQUAL(out.volume, 0.125f);
    check_truncations(c);
}

BOOST_AUTO_TEST_CASE(error_keeps_negative_code) {
    Error e;
    e.code = -7;
    e.message = "no sink named 'x'";
    const Error out = round_trip(e);
    BOOST_CHECK_EQUAL(out.code, -7);
    BOOST_CHECK_EQUAL(out.message, e.message);
    check_truncations(e);
}

BOOST_AUTO_TEST_CASE(kill_client_round_trip) {
    KillClient k;
    k.client_id = 4242;
    BOOST_CHECK_EQUAL(round_trip(k).client_id, 4242u);
    check_truncations(k);
}

// Version 6: a source's level and the default source, and the requests
// that choose them.
BOOST_AUTO_TEST_CASE(sources_and_their_requests_round_trip) {
    SourceList list;
    SourceInfo mic;
    mic.name = "mic";
    mic.type = "alsa";
    mic.volume = 0.5f;
    mic.muted = true;
    mic.is_default = true;
    list.sources.push_back(mic);
    const SourceList out = round_trip(list);
    BOOST_REQUIRE_EQUAL(out.sources.size(), 1u);
    BOOST_CHECK_EQUAL(out.sources[0].volume, 0.5f);
    BOOST_CHECK(out.sources[0].muted && out.sources[0].is_default);
    check_truncations(list);
    SetDefaultSource chosen;
    chosen.name = "speakers.monitor";
    BOOST_CHECK_EQUAL(round_trip(chosen).name, "speakers.monitor");
    check_truncations(chosen);
    SuspendDevice suspend;
    suspend.name = "speakers";
    suspend.suspended = false;
    const SuspendDevice back = round_trip(suspend);
    BOOST_CHECK_EQUAL(back.name, "speakers");
    BOOST_CHECK(!back.suspended);
    check_truncations(suspend);
    SetGroupMember member;
    member.group = "house";
    member.sink = "tv";
    member.delay_ms = 40;
    const SetGroupMember member_back = round_trip(member);
    BOOST_CHECK_EQUAL(member_back.group, "house");
    BOOST_CHECK_EQUAL(member_back.sink, "tv");
    BOOST_CHECK(member_back.member);
    BOOST_CHECK_EQUAL(member_back.delay_ms, 40u);
    check_truncations(member);
    SetGroupRoom room;
    room.group = "house";
    room.room = "kitchen-pi/house";
    room.set_volume = true;
    room.volume = 0.5f;
    room.set_delay = true;
    room.delay_ms = -1;
    const SetGroupRoom room_back = round_trip(room);
    BOOST_CHECK_EQUAL(room_back.room, "kitchen-pi/house");
    BOOST_CHECK(room_back.set_volume && !room_back.set_mute && room_back.set_delay);
    BOOST_CHECK_EQUAL(room_back.volume, 0.5f);
    BOOST_CHECK_EQUAL(room_back.delay_ms, -1);
    check_truncations(room);
    ServerInfo info;
    info.default_source = "mic";
    BOOST_CHECK_EQUAL(round_trip(info).default_source, "mic");
}

BOOST_AUTO_TEST_CASE(lists_round_trip) {
    SinkList sinks;
    StreamList streams;
    for (int i = 0; i < 3; ++i) {
        sinks.sinks.push_back(sample_sink(i));
        streams.streams.push_back(sample_stream(i));
    }
    const SinkList s = round_trip(sinks);
    BOOST_REQUIRE_EQUAL(s.sinks.size(), 3u);
    BOOST_CHECK_EQUAL(s.sinks[2].name, "sink2");
    BOOST_CHECK_EQUAL(s.sinks[0].frames, 1ull << 40);
    BOOST_CHECK(s.sinks[0].is_default && !s.sinks[1].is_default && s.sinks[1].muted);
    BOOST_CHECK_EQUAL(s.sinks[1].state, "running");
    const StreamList t = round_trip(streams);
    BOOST_REQUIRE_EQUAL(t.streams.size(), 3u);
    BOOST_CHECK_EQUAL(t.streams[1].id, 101u);
    BOOST_CHECK_EQUAL(t.streams[1].app, "mpv \xe2\x99\xab");
    BOOST_CHECK_EQUAL(t.streams[1].position, 123456789u);
    check_truncations(sinks);
    check_truncations(streams);
}

BOOST_AUTO_TEST_CASE(app_list_round_trips) {
    AppList apps;
    apps.apps.push_back({"mpv", 0.5f, true, "headphones", 2, 1796000000, true, false});
    apps.apps.push_back({"aplay", 1.0f, false, "", 0, 0, false, true});
    const AppList out = round_trip(apps);
    BOOST_REQUIRE_EQUAL(out.apps.size(), 2u);
    BOOST_CHECK_EQUAL(out.apps[0].name, "mpv");
    BOOST_CHECK_EQUAL(out.apps[0].volume, 0.5f);
    BOOST_CHECK(out.apps[0].muted && !out.apps[1].muted);
    BOOST_CHECK_EQUAL(out.apps[0].sink, "headphones");
    BOOST_CHECK_EQUAL(out.apps[0].streams, 2u);
    BOOST_CHECK_EQUAL(out.apps[1].sink, "");
    BOOST_CHECK_EQUAL(out.apps[0].last_seen, 1796000000u);
    BOOST_CHECK_EQUAL(out.apps[1].last_seen, 0u);
    BOOST_CHECK(out.apps[0].rule && !out.apps[1].rule);
    BOOST_CHECK(!out.apps[0].remembered && out.apps[1].remembered);
    check_truncations(apps);
}

BOOST_AUTO_TEST_CASE(empty_messages_have_empty_bodies) {
    const auto bytes = encode(5, ListSinks{});
    BOOST_CHECK_EQUAL(bytes.size(), kEnvelopeBytes);
    ListSinks out;
    BOOST_CHECK(decode(std::span<const uint8_t>(), out));
    const uint8_t junk[1] = {0};
    BOOST_CHECK(!decode(std::span<const uint8_t>(junk, 1), out));
}

BOOST_AUTO_TEST_CASE(short_packet_has_no_envelope) {
    const uint8_t bytes[7] = {1, 0, 0, 0, 2, 0, 0};
    for (size_t n = 0; n <= sizeof bytes; ++n) {
        BOOST_CHECK(!parse_envelope(std::span<const uint8_t>(bytes, n)));
    }
}

BOOST_AUTO_TEST_CASE(invalid_boolean_rejected) {
    SinkList list;
    list.sinks.push_back(sample_sink(0));
    auto bytes = encode(1, list);
    // Find the `muted` byte: after the count, three strings, four u32 and a f32.
    size_t offset = kEnvelopeBytes + 4;
    offset += 4 + list.sinks[0].name.size();
    offset += 4 + list.sinks[0].type.size();
    offset += 4 + list.sinks[0].state.size();
    offset += 4 * 4 + 4;
    BOOST_REQUIRE_EQUAL(bytes[offset], 1); // muted = true
    bytes[offset] = 2;
    SinkList out;
    BOOST_CHECK(!decode(std::span<const uint8_t>(bytes).subspan(kEnvelopeBytes), out));
}

BOOST_AUTO_TEST_CASE(lying_lengths_rejected) {
    // A string claiming more bytes than the packet holds.
    WireWriter w;
    w.u32(1);
    w.u32(1000);
    w.u8('x');
    Hello h;
    BOOST_CHECK(!decode(w.bytes(), h));

    // A string longer than the protocol allows, even if present.
    WireWriter big;
    big.u32(1);
    big.u32(kMaxStringBytes + 1);
    for (uint32_t i = 0; i <= kMaxStringBytes; ++i) {
        big.u8('a');
    }
    BOOST_CHECK(!decode(big.bytes(), h));

    // A list count far beyond the bytes present must not allocate for it.
    WireWriter list;
    list.u32(0xFFFFFFFFu);
    StreamList streams;
    BOOST_CHECK(!decode(list.bytes(), streams));
    WireWriter many;
    many.u32(kMaxListItems + 1);
    BOOST_CHECK(!decode(many.bytes(), streams));
}

BOOST_AUTO_TEST_CASE(writer_truncates_overlong_strings) {
    Hello h;
    h.app_name.assign(kMaxStringBytes + 50, 'n');
    const Hello out = round_trip(h);
    BOOST_CHECK_EQUAL(out.app_name.size(), kMaxStringBytes);
}

BOOST_AUTO_TEST_CASE(floats_round_trip_exactly) {
    SetVolume v;
    v.target = 1;
    v.stream_id = 3;
    v.mode = 2;
    v.value = std::nextafter(0.5f, 1.0f);
    BOOST_CHECK_EQUAL(round_trip(v).value, v.value);
    v.value = -3.0f;
    BOOST_CHECK_EQUAL(round_trip(v).value, -3.0f);
    check_truncations(v);
}

BOOST_AUTO_TEST_SUITE_END()
