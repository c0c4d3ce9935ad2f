// RTP, RTCP and SAP packets: what audiod writes is what the RFCs say, byte
// by byte, and what it reads from the network is checked before it is
// trusted — every length a packet claims, every version and type.
#include "rtcp.h"
#include "rtp_packet.h"
#include "sap.h"

#include <boost/test/unit_test.hpp>

#include <cstring>
#include <string>
#include <vector>

using namespace audiod::rtp;

namespace {

std::vector<uint8_t> bytes(std::initializer_list<int> values) {
    std::vector<uint8_t> out;
    for (const int v : values) {
        out.push_back(static_cast<uint8_t>(v));
    }
    return out;
}

// A version-2 header (payload type 96, sequence 0x0102, timestamp
// 0x03040506, SSRC 0x0708090a) with the given first byte.
std::vector<uint8_t> header(int first) {
    return bytes({first, 96, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10});
}

} // namespace

BOOST_AUTO_TEST_SUITE(rtp_packets)

BOOST_AUTO_TEST_CASE(the_header_is_rfc_3550s) {
    uint8_t out[kHeaderSize];
    write_header({true, 111, 0xabcd, 0x01020304, 0xdeadbeef}, out);
    const auto expected = bytes({0x80, 0x80 | 111, 0xab, 0xcd, 1, 2, 3, 4, 0xde, 0xad, 0xbe, 0xef});
    BOOST_CHECK_EQUAL_COLLECTIONS(out, out + kHeaderSize, expected.begin(), expected.end());
}

BOOST_AUTO_TEST_CASE(a_written_packet_reads_back) {
    std::vector<uint8_t> datagram(kHeaderSize + 3, 0);
    write_header({false, 96, 65535, 4294967295u, 42}, datagram.data());
    datagram[12] = 7;
    RtpPacket p;
    BOOST_REQUIRE(parse_packet(datagram, p) == PacketError::none);
    BOOST_CHECK(!p.header.marker);
    BOOST_CHECK_EQUAL(p.header.payload_type, 96);
    BOOST_CHECK_EQUAL(p.header.sequence, 65535);
    BOOST_CHECK_EQUAL(p.header.timestamp, 4294967295u);
    BOOST_CHECK_EQUAL(p.header.ssrc, 42u);
    BOOST_CHECK_EQUAL(p.payload.size(), 3u);
    BOOST_CHECK_EQUAL(p.payload[0], 7);
}

BOOST_AUTO_TEST_CASE(csrcs_extensions_and_padding_are_skipped) {
    // Two CSRCs, an extension of one word, payload "AB", two bytes of padding.
    auto d = header(0x80 | 0x20 | 0x10 | 2);
    d.insert(d.end(), {0, 0, 0, 1, 0, 0, 0, 2});       // CSRCs
    d.insert(d.end(), {0xbe, 0xde, 0, 1, 9, 9, 9, 9}); // extension
    d.insert(d.end(), {'A', 'B', 0, 2});               // payload, padding
    RtpPacket p;
    BOOST_REQUIRE(parse_packet(d, p) == PacketError::none);
    BOOST_REQUIRE_EQUAL(p.payload.size(), 2u);
    BOOST_CHECK_EQUAL(p.payload[0], 'A');
    BOOST_CHECK_EQUAL(p.payload[1], 'B');
}

BOOST_AUTO_TEST_CASE(lying_lengths_are_refused) {
    RtpPacket p;
    BOOST_CHECK(parse_packet(bytes({0x80, 96, 0, 0}), p) == PacketError::too_short);
    // Version 1; version 3.
    auto d = header(0x40);
    d.push_back(1);
    BOOST_CHECK(parse_packet(d, p) == PacketError::bad_version);
    d[0] = 0xc0;
    BOOST_CHECK(parse_packet(d, p) == PacketError::bad_version);
    // 15 CSRCs in a 13-byte packet.
    d[0] = 0x8f;
    BOOST_CHECK(parse_packet(d, p) == PacketError::bad_length);
    // An extension whose length runs past the end.
    d = header(0x90);
    d.insert(d.end(), {0xbe, 0xde, 0xff, 0xff, 1});
    BOOST_CHECK(parse_packet(d, p) == PacketError::bad_length);
    // An extension header cut short.
    d = header(0x90);
    d.insert(d.end(), {0xbe, 0xde});
    BOOST_CHECK(parse_packet(d, p) == PacketError::bad_length);
    // Padding larger than the payload, and padding of zero bytes.
    d = header(0xa0);
    d.insert(d.end(), {1, 2, 200});
    BOOST_CHECK(parse_packet(d, p) == PacketError::bad_length);
    d.back() = 0;
    BOOST_CHECK(parse_packet(d, p) == PacketError::bad_length);
    // Padding that eats the whole payload.
    d.back() = 3;
    BOOST_CHECK(parse_packet(d, p) == PacketError::empty_payload);
    BOOST_CHECK(parse_packet(header(0x80), p) == PacketError::empty_payload);
}

BOOST_AUTO_TEST_CASE(a_sender_report_carries_the_clock_mapping_and_cname) {
    SenderReport r{0x11223344, 0x0123456789abcdefull, 480000, 1000, 960000};
    uint8_t out[kMaxRtcpSize];
    const size_t size = write_sender_report(r, "user@192.0.2.7", out);
    BOOST_CHECK_EQUAL(size % 4, 0u);
    BOOST_CHECK_EQUAL(out[0], 0x80);
    BOOST_CHECK_EQUAL(out[1], 200);
    BOOST_CHECK_EQUAL(get_u16(out + 2), 6); // 28 bytes = 7 words
    BOOST_CHECK_EQUAL(out[28], 0x81);       // SDES, one chunk
    BOOST_CHECK_EQUAL(out[29], 202);
    BOOST_CHECK_EQUAL(out[36], 1);  // CNAME
    BOOST_CHECK_EQUAL(out[37], 14); // its length
    BOOST_CHECK_EQUAL(std::string(reinterpret_cast<char*>(out + 38), 14), "user@192.0.2.7");
    RtcpSummary s;
    BOOST_REQUIRE(parse_rtcp({out, size}, s));
    BOOST_REQUIRE(s.has_report);
    BOOST_CHECK_EQUAL(s.report.ssrc, r.ssrc);
    BOOST_CHECK_EQUAL(s.report.ntp_time, r.ntp_time);
    BOOST_CHECK_EQUAL(s.report.rtp_timestamp, r.rtp_timestamp);
    BOOST_CHECK_EQUAL(s.report.packet_count, r.packet_count);
    BOOST_CHECK_EQUAL(s.report.octet_count, r.octet_count);
    BOOST_CHECK(!s.bye);

    const size_t bye = write_bye(7, out);
    BOOST_REQUIRE(parse_rtcp({out, bye}, s));
    BOOST_CHECK(s.bye);
    // A compound packet whose second part claims more than is there.
    const size_t sr = write_sender_report(r, "x", out);
    out[30] = 0xff; // the SDES part's length
    BOOST_CHECK(!parse_rtcp({out, sr}, s));
    BOOST_CHECK(!parse_rtcp(bytes({0x80, 200, 0, 6, 1, 2, 3, 4}), s));
}

// A room's report back: RFC 3550's receiver report, its CNAME, and
// audiod's playout (APP "ADPL"), read back whole; a sender report carries
// none of it.
BOOST_AUTO_TEST_CASE(a_receiver_report_carries_loss_and_how_the_room_plays) {
    ReceiverReport r;
    r.ssrc = 0xa1b2c3d4;
    r.source_ssrc = 0x11223344;
    r.fraction_lost = 64;
    r.cumulative_lost = 0x123456;
    r.highest_sequence = 70000;
    r.jitter = 96;
    r.last_report = 0xdeadbeef;
    r.report_delay = 65536;
    PlayoutReport play;
    play.timed = true;
    play.clock = 2;
    play.sync_error_us = -12.3;
    play.realigns = 4;
    play.link_offset_ms = 150;
    play.delay_ms = 40;
    uint8_t out[kMaxRtcpSize];
    const size_t size = write_receiver_report(r, "kitchen", &play, out);
    BOOST_CHECK_EQUAL(size % 4, 0u);
    BOOST_CHECK_LE(size, kMaxRtcpSize);
    BOOST_CHECK_EQUAL(out[0], 0x81); // one report block
    BOOST_CHECK_EQUAL(out[1], 201);
    RtcpSummary s;
    BOOST_REQUIRE(parse_rtcp({out, size}, s));
    BOOST_CHECK(!s.has_report);
    BOOST_REQUIRE(s.has_receiver_report);
    BOOST_CHECK_EQUAL(s.receiver.ssrc, r.ssrc);
    BOOST_CHECK_EQUAL(s.receiver.source_ssrc, r.source_ssrc);
    BOOST_CHECK_EQUAL(s.receiver.fraction_lost, 64);
    BOOST_CHECK_EQUAL(s.receiver.cumulative_lost, 0x123456u);
    BOOST_CHECK_EQUAL(s.receiver.highest_sequence, 70000u);
    BOOST_CHECK_EQUAL(s.receiver.jitter, 96u);
    BOOST_CHECK_EQUAL(s.receiver.last_report, 0xdeadbeefu);
    BOOST_CHECK_EQUAL(s.receiver.report_delay, 65536u);
    BOOST_CHECK_EQUAL(std::string(s.cname, s.cname_size), "kitchen");
    BOOST_REQUIRE(s.has_playout);
    BOOST_CHECK(s.playout.timed);
    BOOST_CHECK_EQUAL(s.playout.clock, 2);
    BOOST_CHECK_CLOSE(s.playout.sync_error_us, -12.3, 1e-6);
    BOOST_CHECK_EQUAL(s.playout.realigns, 4u);
    BOOST_CHECK_EQUAL(s.playout.link_offset_ms, 150);
    BOOST_CHECK_EQUAL(s.playout.delay_ms, 40);
    // Without a playout (an untimed room), and with a CNAME too long to keep.
    const std::string long_name(200, 'x');
    const size_t plain = write_receiver_report(r, long_name, nullptr, out);
    BOOST_REQUIRE(parse_rtcp({out, plain}, s));
    BOOST_CHECK(!s.has_playout);
    BOOST_CHECK_EQUAL(s.cname_size, 63);
    // A report block cut short is refused.
    out[3] = 6; // 28 bytes: no room for the block's last word
    BOOST_CHECK(!parse_rtcp({out, plain}, s));
}

// What a sender asks of its rooms (APP "ADCT") follows its report and is
// read back whole: every room, by name, with its volume, mute and trim; a
// list cut short keeps the entries that fit, and names too long for a room
// are not taken.
BOOST_AUTO_TEST_CASE(a_sender_asks_its_rooms_for_volume_mute_and_trim) {
    RoomControls controls;
    const auto room = [](const char* name, double volume, bool muted, int delay) {
        RoomControl r;
        r.name_size = static_cast<uint8_t>(std::strlen(name));
        std::memcpy(r.name, name, r.name_size);
        r.volume = volume;
        r.muted = muted;
        r.has_delay = delay >= 0;
        r.delay_ms = static_cast<uint16_t>(delay < 0 ? 0 : delay);
        return r;
    };
    controls.rooms[0] = room("kitchen-pi/house", 0.5, false, -1);
    controls.rooms[1] = room("hall", 1.0, true, 25);
    controls.rooms[2] = room(std::string(63, 'z').c_str(), 9.0, false, 9999);
    controls.count = 3;
    SenderReport r{0x11223344, 1, 2, 3, 4};
    uint8_t out[kMaxSenderRtcpSize];
    size_t size = write_sender_report(r, "sender", out);
    size += write_room_controls(r.ssrc, controls, out + size);
    BOOST_CHECK_EQUAL(size % 4, 0u);
    BOOST_CHECK_LE(size, kMaxSenderRtcpSize);
    RtcpSummary s;
    BOOST_REQUIRE(parse_rtcp({out, size}, s));
    BOOST_CHECK(s.has_report);
    BOOST_REQUIRE(s.has_controls);
    BOOST_CHECK_EQUAL(s.controls_ssrc, r.ssrc);
    BOOST_REQUIRE_EQUAL(s.controls.count, 3);
    const RoomControl& kitchen = s.controls.rooms[0];
    BOOST_CHECK_EQUAL(std::string(kitchen.name, kitchen.name_size), "kitchen-pi/house");
    BOOST_CHECK_CLOSE(kitchen.volume, 0.5, 1e-4);
    BOOST_CHECK(!kitchen.muted);
    BOOST_CHECK(!kitchen.has_delay);
    const RoomControl& hall = s.controls.rooms[1];
    BOOST_CHECK_EQUAL(std::string(hall.name, hall.name_size), "hall");
    BOOST_CHECK(hall.muted);
    BOOST_CHECK(hall.has_delay);
    BOOST_CHECK_EQUAL(hall.delay_ms, 25);
    BOOST_CHECK_EQUAL(s.controls.rooms[2].name_size, 63);
    BOOST_CHECK_CLOSE(s.controls.rooms[2].volume, 4.0, 1e-6); // at most 4
    BOOST_CHECK_EQUAL(s.controls.rooms[2].delay_ms, 9999);
    // An empty list (the sender lets every room go) is a list too.
    const size_t empty = write_room_controls(r.ssrc, RoomControls{}, out);
    BOOST_REQUIRE(parse_rtcp({out, empty}, s));
    BOOST_CHECK(s.has_controls);
    BOOST_CHECK_EQUAL(s.controls.count, 0);
    // A list that claims more entries than its packet holds keeps those that fit.
    const size_t two = write_room_controls(r.ssrc, controls, out);
    out[12] = 200;
    BOOST_REQUIRE(parse_rtcp({out, two}, s));
    BOOST_CHECK_EQUAL(s.controls.count, 3);
    // An entry whose name runs past the packet ends the list there.
    controls.count = 1;
    const size_t one = write_room_controls(r.ssrc, controls, out);
    out[16] = 60; // the first name's size, past the packet's end
    BOOST_REQUIRE(parse_rtcp({out, one}, s));
    BOOST_CHECK_EQUAL(s.controls.count, 0);
}

BOOST_AUTO_TEST_CASE(ntp_time_is_the_wall_clock) {
    // 2026 is about 3.97e9 s after 1900.
    const uint64_t seconds = ntp_now() >> 32;
    BOOST_CHECK_GT(seconds, 3'900'000'000u);
}

BOOST_AUTO_TEST_CASE(sap_announces_and_deletes) {
    const uint8_t origin[4] = {192, 0, 2, 7};
    const std::string sdp = "v=0\ns=x\n";
    const auto a = write_sap(false, 0xbeef, origin, sdp);
    BOOST_CHECK_EQUAL(a[0], 0x20); // version 1, IPv4, announcement
    BOOST_CHECK_EQUAL(a[1], 0);
    const char* why = nullptr;
    const auto read = parse_sap(a, why);
    BOOST_REQUIRE(read);
    BOOST_CHECK(!read->deletion);
    BOOST_CHECK_EQUAL(read->hash, 0xbeef);
    BOOST_CHECK_EQUAL(read->origin.size(), 4u);
    BOOST_CHECK_EQUAL(read->sdp, sdp);
    const auto d = write_sap(true, 1, origin, sdp);
    BOOST_CHECK_EQUAL(d[0], 0x24);
    BOOST_REQUIRE(parse_sap(d, why));
    BOOST_CHECK(parse_sap(d, why)->deletion);

    const uint8_t origin6[16] = {0xfd};
    const auto six = write_sap(false, 2, origin6, sdp);
    BOOST_CHECK_EQUAL(six[0], 0x30);
    BOOST_REQUIRE(parse_sap(six, why));
    BOOST_CHECK_EQUAL(parse_sap(six, why)->origin.size(), 16u);
}

BOOST_AUTO_TEST_CASE(sap_that_cannot_be_read_is_refused) {
    const char* why = nullptr;
    BOOST_CHECK(!parse_sap(bytes({0x20, 0}), why));
    // Encrypted; compressed; version 2.
    for (const int first : {0x22, 0x21, 0x40}) {
        BOOST_CHECK(!parse_sap(bytes({first, 0, 0, 0, 1, 2, 3, 4, 'v', '=', '0'}), why));
    }
    // Authentication data past the end.
    BOOST_CHECK(!parse_sap(bytes({0x20, 10, 0, 0, 1, 2, 3, 4, 'v', '=', '0'}), why));
    // A payload type that is not SDP, and one without its NUL.
    auto other = bytes({0x20, 0, 0, 0, 1, 2, 3, 4});
    for (const char c : std::string("text/plain")) {
        other.push_back(static_cast<uint8_t>(c));
    }
    BOOST_CHECK(!parse_sap(other, why));
    other.push_back(0);
    BOOST_CHECK(!parse_sap(other, why));
    // No payload type at all: the SDP starts at once.
    const auto bare = bytes({0x20, 0, 0, 0, 1, 2, 3, 4, 'v', '=', '0', '\n'});
    BOOST_REQUIRE(parse_sap(bare, why));
    BOOST_CHECK_EQUAL(parse_sap(bare, why)->sdp, "v=0\n");
}

BOOST_AUTO_TEST_SUITE_END()
