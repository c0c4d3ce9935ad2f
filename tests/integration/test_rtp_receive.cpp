// The RTP source, fed by programs we did not write and by audiod's own RTP
// sink: GStreamer and ffmpeg send a 1 kHz tone (Opus and L16), audiod
// receives it and a recording of the source holds that tone — pitch, level,
// length, no gap. Hostile datagrams among the real ones are counted and
// dropped without a click. A discovering source finds sessions by SAP.
#include "helpers.h"
#include "rtp_packet.h"

#include <boost/test/unit_test.hpp>

#include <algorithm>
#include <arpa/inet.h>
#include <cmath>
#include <csignal>
#include <netinet/in.h>
#include <sys/socket.h>
#include <thread>

using namespace audiod;
using namespace audiod::test;
using namespace std::chrono_literals;
namespace wire = audiod::rtp;

namespace {

std::string receiver_config(const std::string& source_options, const std::string& extra = "") {
    return "[server]\nrt-priority = 0\n\n[sinks.main]\ntype = \"null\"\n\n" + extra +
           "[sources.rx]\ntype = \"rtp\"\n" + source_options;
}

// Records the source while `send` makes a sender play its tone, until the
// sender has gone quiet; returns what was heard.
HeardTone record_while(const std::function<void()>& send) {
    TempDir dir;
    Recording recording(dir.file("heard.wav"), {"--source", "rx", "--format", "f32le"});
    send();
    // The sender is done: the source falls idle a second after its last packet.
    BOOST_REQUIRE(eventually([] { return source_field("rx", "session") == "idle"; }, 30s));
    BOOST_TEST_MESSAGE(run_tool("audioctl", {"list", "sources"}).out);
    recording.stop();
    return hear_tone(read_wav_f32(dir.file("heard.wav")), 2, 48000, 1000.0);
}

// The tone arrived, at its pitch and about its level and length, however
// the machine kept time; where it kept time, also exactly and clean. (A CI
// run under load heard a GStreamer sender's tone 1.10 s long and 0.74 dB
// low, and another an Opus tone 3.59 dB low: concealment had filled late
// packets, and Opus's fades. A stress pass under TSan heard one 5.8 dB low
// in the fit over the whole tone, as the receiver concealed and re-aligned;
// so the loose level is the median of 100 ms windows, which a halved gain,
// 6 dB, still fails.) The tone is 1 s long unless `seconds` says otherwise.
void check_tone(const HeardTone& heard, double length_tolerance_ms, double max_thd_db,
                double seconds = 1.0) {
    const double level_db = 20 * std::log10(heard.tone.amplitude / 0.5);
    const double window_level_db = 20 * std::log10(heard.median_window_amplitude / 0.5);
    BOOST_CHECK_LE(std::fabs(heard.frequency - 1000.0), 1.0); // 0.1 %
    BOOST_CHECK_LE(std::fabs(heard.seconds - seconds), 0.5);
    BOOST_CHECK_LE(std::fabs(window_level_db), 5.0);
    if (rtp_receiver_kept_time({"net"})) {
        BOOST_CHECK_LE(std::fabs(heard.seconds - seconds) * 1000, length_tolerance_ms);
        BOOST_CHECK_LE(std::fabs(level_db), 0.5);
        BOOST_CHECK_LT(heard.tone.thd_n_db, max_thd_db);
        BOOST_CHECK_LE(heard.longest_quiet, 4u);
    }
}

// Sends one datagram to 127.0.0.1:port from a fresh socket.
void send_datagram(uint16_t port, const std::vector<uint8_t>& data) {
    const int fd = ::socket(AF_INET, SOCK_DGRAM, 0);
    sockaddr_in to{};
    to.sin_family = AF_INET;
    to.sin_port = htons(port);
    to.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    ::sendto(fd, data.data(), data.size(), 0, reinterpret_cast<sockaddr*>(&to), sizeof to);
    ::close(fd);
}

} // namespace

BOOST_AUTO_TEST_SUITE(rtp_receive)

BOOST_AUTO_TEST_CASE(audiod_hears_its_own_rtp_sink_opus_and_l16) {
    for (const std::string payload : {"opus", "l16"}) {
        const uint16_t port = free_udp_port_pair();
        const std::string where = "address = \"127.0.0.1\"\nport = " + std::to_string(port) +
                                  "\npayload = \"" + payload + "\"\n";
        ServerProcess server(receiver_config(
            where, "[sinks.net]\ntype = \"rtp\"\ndestination = \"127.0.0.1\"\nport = " +
                       std::to_string(port) + "\npayload = \"" + payload + "\"\n\n"));
        TempDir dir;
        write_tone_wav(dir.file("tone.wav"), 48000, 1000.0, 1.0);
        const HeardTone heard = record_while([&] {
            const ProgramResult played = run_tool(
                "audioplay",
                {"--quiet", "--sink", "net", "--latency-ms", kExactPlayerMs, dir.file("tone.wav")},
                60s);
            BOOST_REQUIRE_MESSAGE(played.status == 0, played.err);
        });
        check_tone(heard, payload == "opus" ? 10 : 5, payload == "opus" ? -30 : -60);
        BOOST_CHECK_EQUAL(source_number("rx", "lost"), 0u);
        BOOST_CHECK_GT(source_number("rx", "received"), 90u);
        BOOST_CHECK_EQUAL(server.stop(SIGTERM), 0);
    }
}

BOOST_AUTO_TEST_CASE(gstreamer_sends_opus_and_l16) {
    const std::string tone = "audiotestsrc is-live=true wave=sine freq=1000 volume=0.5 "
                             "samplesperbuffer=480 num-buffers=100 ! "
                             "audio/x-raw,rate=48000,channels=2 ! ";
    const std::pair<std::string, std::string> senders[] = {
        {"opus", "opusenc bitrate=128000 ! rtpopuspay pt=96"},
        {"l16", "audioconvert ! audio/x-raw,format=S16BE ! rtpL16pay pt=96"},
    };
    for (const auto& [payload, encode] : senders) {
        const uint16_t port = free_udp_port_pair();
        ServerProcess server(
            receiver_config("address = \"127.0.0.1\"\nport = " + std::to_string(port) +
                            "\npayload = \"" + payload + "\"\n"));
        const HeardTone heard = record_while([&, payload = payload, encode = encode] {
            std::vector<std::string> argv{installed("gst-launch-1.0"), "-q"};
            const std::string pipeline =
                tone + encode + " ! udpsink host=127.0.0.1 port=" + std::to_string(port);
            for (size_t at = 0; at < pipeline.size();) {
                const size_t end = std::min(pipeline.find(' ', at), pipeline.size());
                argv.push_back(pipeline.substr(at, end - at));
                at = end + 1;
            }
            const ProgramResult sent = run_program(argv, 60s);
            BOOST_REQUIRE_MESSAGE(sent.status == 0, payload << ": " << sent.err);
        });
        // opusenc's 20 ms frames, and its encoder delay at the start.
        check_tone(heard, payload == "opus" ? 25 : 5, payload == "opus" ? -30 : -60);
        BOOST_CHECK_EQUAL(source_number("rx", "lost"), 0u);
        BOOST_CHECK_EQUAL(server.stop(SIGTERM), 0);
    }
}

BOOST_AUTO_TEST_CASE(ffmpeg_sends_opus_and_l16) {
    const std::pair<std::string, std::vector<std::string>> senders[] = {
        {"opus", {"-c:a", "libopus", "-b:a", "128k"}},
        {"l16", {"-c:a", "pcm_s16be"}},
    };
    for (const auto& [payload, codec] : senders) {
        const uint16_t port = free_udp_port_pair();
        ServerProcess server(
            receiver_config("address = \"127.0.0.1\"\nport = " + std::to_string(port) +
                            "\npayload = \"" + payload + "\"\n"));
        const HeardTone heard = record_while([&, payload = payload, codec = codec] {
            std::vector<std::string> argv{installed("ffmpeg"),
                                          "-nostdin",
                                          "-loglevel",
                                          "error",
                                          "-re",
                                          "-f",
                                          "lavfi",
                                          "-i",
                                          "aevalsrc=0.5*sin(2*PI*1000*t)|0.5*sin(2*PI*1000*t):"
                                          "s=48000:d=1"};
            argv.insert(argv.end(), codec.begin(), codec.end());
            for (const std::string& a :
                 {std::string("-payload_type"), std::string("96"), std::string("-f"),
                  std::string("rtp"), "rtp://127.0.0.1:" + std::to_string(port)}) {
                argv.push_back(a);
            }
            const ProgramResult sent = run_program(argv, 60s);
            BOOST_REQUIRE_MESSAGE(sent.status == 0, payload << ": " << sent.err);
        });
        check_tone(heard, payload == "opus" ? 25 : 5, payload == "opus" ? -30 : -60);
        BOOST_CHECK_EQUAL(source_number("rx", "lost"), 0u);
        BOOST_CHECK_EQUAL(server.stop(SIGTERM), 0);
    }
}

BOOST_AUTO_TEST_CASE(hostile_datagrams_are_counted_and_dropped_without_a_click) {
    // The source listens on IPv4 and IPv6 and takes only 127.0.0.1.
    const uint16_t port = free_udp_port_pair();
    ServerProcess server(receiver_config(
        "address = \"::\"\nport = " + std::to_string(port) +
            "\npayload = \"l16\"\nallow = \"127.0.0.1\"\n",
        "[sinks.net]\ntype = \"rtp\"\ndestination = \"127.0.0.1\"\nport = " + std::to_string(port) +
            "\npayload = \"l16\"\n\n"));
    // The datagrams go out once the tone plays, and it plays until the
    // receiver has taken more of it after them. (The test once waited for
    // 20 packets received, which the sink's second of silence at its start
    // gives, and played a 1 s tone: a stress run sent the datagrams after
    // that silence had ended and before the tone began, and the "foreign"
    // sender rightly took over the silent session.)
    double seconds = 0;
    const HeardTone heard = record_while([&] {
        PlayingClient player(
            {"--signal", "tone", "--sink", "net", "--app", "tone", "--latency-ms", kExactPlayerMs});
        BOOST_REQUIRE_MESSAGE(wait_for_playing("tone", 30s, 4800),
                              why_no_stream(player.program(), server));
        // While the tone plays: garbage from 127.0.0.1 ...
        std::vector<uint8_t> header(12, 0);
        wire::write_header({false, 96, 1, 1, 0x0badf00d}, header.data());
        const std::vector<std::vector<uint8_t>> malformed = {
            {0x80, 96, 0},                                  // too short
            {0x40, 96, 0, 1, 0, 0, 0, 1, 0, 0, 0, 1, 0, 0}, // version 1
            {0x8f, 96, 0, 1, 0, 0, 0, 1, 0, 0, 0, 1, 0, 0}, // 15 CSRCs in 14 bytes
            {0x90, 96, 0, 1, 0, 0, 0, 1, 0, 0, 0, 1, 0xbe, 0xde, 0xff, 0xff}, // extension lies
            {0xa0, 96, 0, 1, 0, 0, 0, 1, 0, 0, 0, 1, 1, 2, 99},               // padding lies
        };
        for (const auto& d : malformed) {
            send_datagram(port, d);
        }
        auto odd = header; // an odd byte count: not whole L16 frames
        odd.insert(odd.end(), {1, 2, 3});
        send_datagram(port, odd);
        auto wrong_type = header;
        wrong_type[1] = 100;
        wrong_type.insert(wrong_type.end(), 4, 0);
        send_datagram(port, wrong_type);
        auto foreign = header; // a second sender's stream (another SSRC)
        foreign.insert(foreign.end(), 400, 0x7f);
        for (int i = 0; i < 5; ++i) {
            send_datagram(port, foreign);
        }
        // ... and a real-looking packet from ::1, which `allow` refuses.
        const int fd = ::socket(AF_INET6, SOCK_DGRAM, 0);
        sockaddr_in6 to{};
        to.sin6_family = AF_INET6;
        to.sin6_port = htons(port);
        to.sin6_addr = in6addr_loopback;
        ::sendto(fd, foreign.data(), foreign.size(), 0, reinterpret_cast<sockaddr*>(&to),
                 sizeof to);
        ::close(fd);
        // The tone's packets queue behind the datagrams: 20 more taken
        // means all of them were seen while the tone played.
        const uint64_t received = source_number("rx", "received");
        BOOST_REQUIRE(
            eventually([&] { return source_number("rx", "received") > received + 20; }, 30s));
        const ProgramResult played = player.stop();
        BOOST_REQUIRE_MESSAGE(played.status == 0, played.err);
        seconds = double(json_number(played.out, "written").value_or(0)) / 48000;
    });
    check_tone(heard, 5, -60, seconds);
    BOOST_CHECK_EQUAL(source_number("rx", "malformed"), 6u);
    BOOST_CHECK_EQUAL(source_number("rx", "wrong-type"), 1u);
    BOOST_CHECK_EQUAL(source_number("rx", "refused"), 1u);
    BOOST_CHECK_EQUAL(source_number("rx", "lost"), 0u);
    // The second sender's packets are foreign while the first one sends; a
    // sink held up for 300 ms (an xrun) lets them take over, rightly.
    if (rtp_receiver_kept_time({"net"})) {
        BOOST_CHECK_EQUAL(source_number("rx", "foreign"), 5u);
        BOOST_CHECK_EQUAL(source_number("rx", "sessions"), 1u);
    }
    BOOST_CHECK_EQUAL(server.stop(SIGTERM), 0);
}

// A sender held up longer than the source's latency (but not a whole
// latency longer) delivers audio the reader has already played past: the
// reader played silence there, and those packets are counted as overdue —
// what tests read, with xruns and losses, to tell whether the machine kept
// time. A sender that catches up plays on at the same latency; one whose
// packets stay behind the reader (the path's delay grew for good) has the
// reader re-aligned after a latency's time, and is heard again. The test
// sends L16 by hand, 5 ms a packet, on a real-time schedule, against a
// 100 ms latency: 1.5 s, held up 150 ms and catching up; 1.5 s more, held
// up 150 ms for good.
BOOST_AUTO_TEST_CASE(packets_held_up_past_their_time_are_counted_and_followed) {
    const uint16_t port = free_udp_port_pair();
    ServerProcess server(receiver_config("address = \"127.0.0.1\"\nport = " + std::to_string(port) +
                                         "\npayload = \"l16\"\nlatency-ms = 100\n"));
    TempDir dir;
    Recording recording(dir.file("heard.wav"), {"--source", "rx", "--format", "f32le"});
    constexpr uint32_t kFrames = 240;
    std::vector<uint8_t> packet(12 + kFrames * 2 * 2);
    for (size_t i = 12; i < packet.size(); i += 2) {
        packet[i] = 0x20; // 0x2000 big-endian: a quarter of full scale
    }
    const int fd = ::socket(AF_INET, SOCK_DGRAM, 0);
    sockaddr_in to{};
    to.sin_family = AF_INET;
    to.sin_port = htons(port);
    to.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    // Packet k is due at k × 5 ms; held up at 0.75 s, packets 150..180 go
    // out at once at 0.9 s and the rest on time; held up again at 2.25 s,
    // every packet from 450 on goes 150 ms after its time.
    const auto start = std::chrono::steady_clock::now();
    const auto at = [&](int k) { return start + std::chrono::microseconds(5000) * k; };
    // What the receiver held just before the first hold, to tell a sender's
    // lateness from the receiver's if the counts below are off.
    std::string before_hold;
    std::thread snapshot([&] {
        std::this_thread::sleep_until(at(140));
        before_hold = run_tool("audioctl", {"list", "sources"}).out;
    });
    // This sender is a test thread: held up itself (a stress pass counted
    // no packet overdue and one re-alignment, as a sender stalled for 200 ms
    // early on would make), its own holds are no longer the only ones.
    std::chrono::steady_clock::duration sender_late{};
    for (uint16_t k = 0; k < 600; ++k) {
        auto due = at(k);
        if (k >= 150 && k < 450) {
            due = std::max(due, at(150) + 150ms);
        } else if (k >= 450) {
            due += 150ms;
        }
        std::this_thread::sleep_until(due);
        wire::write_header({k == 0, 96, k, uint32_t{k} * kFrames, 0x5eed}, packet.data());
        ::sendto(fd, packet.data(), packet.size(), 0, reinterpret_cast<sockaddr*>(&to), sizeof to);
        sender_late = std::max(sender_late, std::chrono::steady_clock::now() - due);
    }
    ::close(fd);
    snapshot.join();
    BOOST_REQUIRE(eventually([] { return source_field("rx", "session") == "idle"; }, 30s));
    const std::string sources = run_tool("audioctl", {"--json", "list", "sources"}).out + "\n" +
                                "before the first hold:\n" + before_hold;
    recording.stop();
    const std::vector<float> heard = read_wav_f32(dir.file("heard.wav"));
    size_t loud = 0;
    for (size_t f = 0; f < heard.size() / 2; ++f) {
        loud += std::fabs(heard[2 * f] - 0.25f) < 0.01f ? 1 : 0;
    }
    BOOST_CHECK_EQUAL(source_number("rx", "received"), 600u);
    BOOST_CHECK_EQUAL(source_number("rx", "lost"), 0u);
    const auto late_ms = std::chrono::duration_cast<std::chrono::milliseconds>(sender_late).count();
    // The counts below are what a reader that kept time makes of the
    // holds. One held up itself (its cycles late: xruns) passed fewer
    // packets by while they were held, and counts fewer overdue (a loaded
    // CI run counted 11).
    const uint64_t reader_late = source_number("rx", "xruns");
    if (late_ms > 20 || reader_late > 0) {
        BOOST_TEST_MESSAGE("the sender was held up " << late_ms << " ms, the reader " << reader_late
                                                     << " times: only the delivery is checked\n"
                                                     << sources);
        BOOST_CHECK_MESSAGE(loud >= 48000 && loud <= 48000 * 3,
                            loud / 48000.0 << " s heard at the packets' level\n"
                                           << sources);
        BOOST_CHECK_EQUAL(server.stop(SIGTERM), 0);
        return;
    }
    // The first hold: the ten packets of its first 50 ms had been played
    // past. The second: 50 ms played past, then 100 ms (twenty packets) of
    // packets wholly behind the reader, then one re-alignment. Up to 30
    // more: this sender is a test thread on a loaded machine, and a packet
    // it sent late is overdue too (a CI run counted 53, against 50 before).
    // (Two where the receiving thread, which is not a real-time one, was
    // itself held up by a loaded machine across a hold: a CI run beside
    // a sanitizer build counted 2, its sender and reader on time.)
    BOOST_CHECK_MESSAGE(source_number("rx", "resyncs") >= 1 && source_number("rx", "resyncs") <= 2,
                        sources);
    BOOST_CHECK_MESSAGE(
        source_number("rx", "overdue") >= 20 && source_number("rx", "overdue") <= 80, sources);
    // Heard to the end: of the 3 s sent, each hold costs what was played
    // past (50 ms, then 150 ms); without the re-alignment, everything after
    // the second hold would be silence.
    BOOST_CHECK_MESSAGE(loud >= 48000 * 26 / 10 && loud <= 48000 * 3,
                        loud / 48000.0 << " s heard at the packets' level\n"
                                       << sources);
    BOOST_CHECK_EQUAL(server.stop(SIGTERM), 0);
}

BOOST_AUTO_TEST_CASE(a_source_loaded_at_run_time_reads_an_sdp_file) {
    TempDir dir;
    const uint16_t port = free_udp_port_pair();
    ServerProcess server(receiver_config(
        "address = \"127.0.0.1\"\nport = " + std::to_string(free_udp_port_pair()) + "\n",
        "[sinks.net]\ntype = \"rtp\"\ndestination = \"127.0.0.1\"\n"
        "port = " +
            std::to_string(port) + "\npayload = \"l24\"\nsdp-file = \"" + dir.file("net.sdp") +
            "\"\n\n"));
    BOOST_REQUIRE_EQUAL(run_tool("audioctl", {"unload-source", "rx"}).status, 0);
    const ProgramResult loaded =
        run_tool("audioctl",
                 {"load-source", "rtp", "rx", "sdp-file=" + dir.file("net.sdp"), "latency-ms=20"});
    BOOST_REQUIRE_MESSAGE(loaded.status == 0, loaded.err);
    BOOST_CHECK_EQUAL(source_field("rx", "payload"), "L24");
    BOOST_CHECK_EQUAL(source_field("rx", "listen"), "127.0.0.1:" + std::to_string(port));
    write_tone_wav(dir.file("tone.wav"), 48000, 1000.0, 1.0);
    const HeardTone heard = record_while([&] {
        const ProgramResult played = run_tool(
            "audioplay",
            {"--quiet", "--sink", "net", "--latency-ms", kExactPlayerMs, dir.file("tone.wav")},
            60s);
        BOOST_REQUIRE_MESSAGE(played.status == 0, played.err);
    });
    check_tone(heard, 5, -60);
    // Bad options name themselves, and nothing is left half-loaded.
    const ProgramResult bad = run_tool("audioctl", {"load-source", "rtp", "bad", "latency-ms=0"});
    BOOST_CHECK_EQUAL(bad.status, 1);
    BOOST_CHECK_MESSAGE(bad.err.find("latency-ms") != std::string::npos, bad.err);
    BOOST_CHECK_EQUAL(run_tool("audioctl", {"unload-source", "bad"}).status, 1);
    BOOST_CHECK_EQUAL(server.stop(SIGTERM), 0);
}

// A discovering source (discover = true) hears a session's SAP
// announcements and the server opens an RTP source named after the session,
// with what the discoverer passes on (its latency, and the sink it plays
// into); when the sender says goodbye, that source closes.
BOOST_AUTO_TEST_CASE(a_discovering_source_opens_a_source_per_announced_session) {
    TempDir dir;
    const uint16_t port = free_udp_port_pair();
    const std::string found = "kitchen-" + std::to_string(port);
    ServerProcess server(
        receiver_config("discover = true\nlatency-ms = 30\nsink = \"out\"\n",
                        "[sinks.out]\ntype = \"file\"\nformat = \"f32le\"\npath = \"" +
                            dir.file("out.wav") + "\"\n\n"));
    BOOST_CHECK_EQUAL(source_field("rx", "play-stream"), ""); // it passes `sink` on
    // The sender, loaded at run time, announces a multicast L16 session.
    const ProgramResult loaded =
        run_tool("audioctl", {"load-sink", "rtp", "net", "destination=239.255.77.3",
                              "port=" + std::to_string(port), "payload=l16", "announce=true",
                              "session-name=kitchen " + std::to_string(port)});
    BOOST_REQUIRE_MESSAGE(loaded.status == 0, loaded.err);
    BOOST_REQUIRE_MESSAGE(eventually([&] { return !source_field(found, "listen").empty(); }, 30s),
                          run_tool("audioctl", {"list", "sources"}).out);
    BOOST_CHECK_EQUAL(source_field(found, "listen"), "239.255.77.3:" + std::to_string(port));
    BOOST_CHECK_EQUAL(source_field(found, "payload"), "L16");
    BOOST_CHECK_EQUAL(source_field(found, "target-ms"), "30");
    BOOST_CHECK_NE(source_field("rx", "found").find(found), std::string::npos);

    // It plays into the discoverer's sink, and carries the session's sound.
    // (The sink also plays whatever other tests announce meanwhile — SAP is
    // shared — so the tone is heard in a recording of the found source.)
    const uint32_t stream = static_cast<uint32_t>(source_number(found, "play-stream"));
    BOOST_REQUIRE_NE(stream, 0u);
    BOOST_CHECK_EQUAL(stream_field(stream, "device"), "out");
    BOOST_CHECK_EQUAL(stream_field(stream, "app"), "rtp:" + found);
    write_tone_wav(dir.file("tone.wav"), 48000, 1000.0, 1.0);
    Recording recording(dir.file("heard.wav"), {"--source", found, "--format", "f32le"});
    const ProgramResult played = run_tool(
        "audioplay",
        {"--quiet", "--sink", "net", "--latency-ms", kExactPlayerMs, dir.file("tone.wav")}, 60s);
    BOOST_REQUIRE_MESSAGE(played.status == 0, played.err);
    BOOST_REQUIRE(eventually([&] { return source_field(found, "session") == "idle"; }, 30s));
    recording.stop();
    // Its sound arrived (its exact length and cleanliness where the machine
    // kept time are judged in the cases above, on the same receiver).
    const HeardTone heard = hear_tone(read_wav_f32(dir.file("heard.wav")), 2, 48000, 1000.0);
    BOOST_CHECK_LE(std::fabs(heard.seconds - 1.0), 0.5);
    BOOST_CHECK_LE(std::fabs(heard.frequency - 1000.0), 1.0);

    // The sender's goodbye (a SAP deletion as it closes) closes the source.
    BOOST_REQUIRE_EQUAL(run_tool("audioctl", {"unload-sink", "net"}).status, 0);
    BOOST_CHECK(eventually([&] { return source_field(found, "type").empty(); }, 30s));
    BOOST_CHECK(eventually([&] { return stream_field(stream, "app").empty(); }, 10s));
    // (Other tests' sessions may be found meanwhile: SAP is shared.)
    BOOST_CHECK_EQUAL(source_field("rx", "found").find(found), std::string::npos);
    BOOST_CHECK_GE(source_number("rx", "deletions"), 1u);
    BOOST_CHECK_EQUAL(server.stop(SIGTERM), 0);
}

BOOST_AUTO_TEST_CASE(a_discovering_source_takes_only_what_it_passes_on) {
    ServerProcess server(receiver_config("address = \"127.0.0.1\"\n"));
    const ProgramResult bad =
        run_tool("audioctl", {"load-source", "rtp", "lan", "discover=true", "port=5004"});
    BOOST_CHECK_EQUAL(bad.status, 1);
    BOOST_CHECK_MESSAGE(bad.err.find("takes only latency-ms, allow") != std::string::npos, bad.err);
    const ProgramResult odd = run_tool("audioctl", {"load-source", "rtp", "lan", "discover=maybe"});
    BOOST_CHECK_EQUAL(odd.status, 1);
    BOOST_CHECK_MESSAGE(odd.err.find("discover") != std::string::npos, odd.err);
    // A room's timing is passed on, checked as the sources found check it.
    const ProgramResult early = run_tool("audioctl", {"load-source", "rtp", "lan", "discover=true",
                                                      "latency-ms=30", "link-offset-ms=20"});
    BOOST_CHECK_EQUAL(early.status, 1);
    BOOST_CHECK_MESSAGE(early.err.find("link-offset-ms") != std::string::npos, early.err);
    const ProgramResult timed =
        run_tool("audioctl", {"load-source", "rtp", "lan", "discover=true", "latency-ms=30",
                              "link-offset-ms=150", "delay-ms=20"});
    BOOST_CHECK_MESSAGE(timed.status == 0, timed.err);
    BOOST_CHECK_EQUAL(server.stop(SIGTERM), 0);
}

BOOST_AUTO_TEST_SUITE_END()

// Not a ctest entry: run by hand (--run_test=rtp_network) on an idle
// machine. Beside the suite's other tests its latency, though no device
// was late, strayed 5.6 ms above its median once (47.0 ms against 41.4).
BOOST_AUTO_TEST_SUITE(rtp_network)

namespace {

// A minute of Opus with FEC from audiod to audiod through a bad network
// (tests/fixtures/udp_relay.cpp: 5 % loss, 3 % duplicates, 0-20 ms of
// jitter that reorders), from a sender whose clock runs 0.1 % fast (a sink
// at 48048 Hz whose RTP clock says 48000): the tone arrives whole, at pitch,
// with its timeline intact; the receiver's counts match what the relay did;
// the loop learns the 0.1 % and holds the latency within 5 ms of the target;
// and the tone's THD+N is below `max_thd_db`. `resend` sends every packet
// twice (the sink's option of that name).
void follow_a_lossy_network_for_a_minute(bool resend, double max_thd_db) {
    constexpr double kSeconds = 62;
    TempDir dir;
    const uint16_t relay_port = free_udp_port_pair();
    const uint16_t port = free_udp_port_pair();
    BackgroundProgram relay({bin("audiod-udp-relay"), "--listen", std::to_string(relay_port),
                             "--to", "127.0.0.1:" + std::to_string(port), "--loss", "5",
                             "--duplicate", "3", "--jitter-ms", "20", "--seed", "7"});
    BOOST_REQUIRE(wait_for_udp_listener(relay_port));
    ServerProcess server(receiver_config(
        "address = \"127.0.0.1\"\nport = " + std::to_string(port) + "\nlatency-ms = 40\n",
        "[sinks.net]\ntype = \"rtp\"\ndestination = \"127.0.0.1\"\nport = " +
            std::to_string(relay_port) +
            "\nrate = 48048\nfec = true\nexpected-loss = 10\nbitrate = 64000\nptime = 10\n" +
            (resend ? "resend = true\n" : "") + "\n"));
    write_tone_wav(dir.file("tone.wav"), 48000, 1000.0, kSeconds);
    Recording recording(dir.file("heard.wav"), {"--source", "rx", "--format", "f32le"});
    BackgroundProgram player({bin("audioplay"), "--quiet", "--sink", "net", "--latency-ms",
                              kExactPlayerMs, dir.file("tone.wav")});
    // Once the loop has had time to lock (its warm-up and a settling
    // period), the latency it holds is sampled every second to the end.
    const auto id = wait_for_app_stream("audioplay");
    BOOST_REQUIRE(id);
    BOOST_REQUIRE(wait_for_position(*id, 48000 * 12, 60s));
    std::vector<double> latencies;
    const auto deadline =
        std::chrono::steady_clock::now() + std::chrono::seconds(int(kSeconds) * 3);
    for (;;) {
        // Until the player's last second, or its stream is gone (it ended
        // early), or far past any schedule.
        const std::optional<uint64_t> played = stream_position(*id);
        if (!played || *played >= uint64_t(48000 * (kSeconds - 1)) ||
            std::chrono::steady_clock::now() > deadline) {
            break;
        }
        const std::string text = source_field("rx", "latency-ms");
        if (!text.empty() && source_field("rx", "session") == "receiving") {
            latencies.push_back(std::stod(text));
        }
        std::this_thread::sleep_for(1s); // a sampling period, not a wait for an event
    }
    BOOST_REQUIRE_EQUAL(player.finish(60s).status, 0);
    BOOST_REQUIRE(eventually([] { return source_field("rx", "session") == "idle"; }, 30s));
    const std::string stats = run_tool("audioctl", {"list", "sources"}).out;
    BOOST_TEST_MESSAGE(stats);
    recording.stop();
    ::kill(relay.pid(), SIGTERM);
    const ProgramResult relayed = relay.finish(30s);
    BOOST_TEST_MESSAGE("relay: " << relayed.out);

    // What the relay did is what the receiver counted: every datagram it
    // passed on was received (the count includes duplicates and late ones);
    // without resending, every dropped packet was concealed (and none else,
    // but those that came too late) and every duplicate recognised; with
    // it, a packet is lost only when both its copies were (about 0.25 %).
    const uint64_t dropped = json_number(relayed.out, "dropped").value_or(0);
    const uint64_t duplicated = json_number(relayed.out, "duplicated").value_or(0);
    const uint64_t forwarded = json_number(relayed.out, "forwarded").value_or(0);
    BOOST_CHECK_GT(dropped, 100u);
    const uint64_t received = source_number("rx", "received");
    const uint64_t lost = source_number("rx", "lost");
    const uint64_t late = source_number("rx", "late");
    const uint64_t duplicate = source_number("rx", "duplicate");
    BOOST_CHECK_LE(std::llabs(int64_t(received) - int64_t(forwarded)), 2);
    if (resend) {
        BOOST_CHECK_LT(lost, received / 100);
    } else {
        // (Within 5: a drop among the last packets, with nothing after it,
        // is never known to be lost, and one run came 3 off.)
        BOOST_CHECK_LE(std::llabs(int64_t(lost - late) - int64_t(dropped)), 5);
        BOOST_CHECK_LE(std::llabs(int64_t(duplicate) - int64_t(duplicated)), int64_t(late) + 2);
    }
    const auto samples = read_wav_f32(dir.file("heard.wav"));
    const HeardTone heard = hear_tone(samples, 2, 48000, 1000.0);
    BOOST_CHECK_LE(std::fabs(heard.seconds - kSeconds), 0.5);

    // The rest is what the receiver makes of the network, and only that on
    // a machine that kept time: no device woke a cycle late and no packet
    // came after its deadline (20 ms of jitter against a 40 ms target: a
    // late one means the receiving thread was held up, under a sanitizer
    // on a loaded machine).
    if (sink_number("net", "xruns") != 0 || source_number("rx", "xruns") != 0 || late != 0) {
        BOOST_TEST_MESSAGE("the machine was late (xruns or late packets): only the counts "
                           "and the sound's arrival are checked");
        BOOST_CHECK_EQUAL(server.stop(SIGTERM), 0);
        return;
    }
    BOOST_CHECK_GE(latencies.size(), 30u);
    // Where the loop settled (the first packets place the reader within
    // half a packet of the target), and how well it holds that.
    std::vector<double> sorted = latencies;
    std::sort(sorted.begin(), sorted.end());
    const double median = sorted.empty() ? 0 : sorted[sorted.size() / 2];
    if (!sorted.empty()) {
        BOOST_TEST_MESSAGE("latency " << sorted.front() << " .. " << sorted.back() << " ms, median "
                                      << median << " ms over " << latencies.size()
                                      << " samples, drift " << source_field("rx", "drift-ppm")
                                      << " ppm");
        BOOST_CHECK_LE(std::fabs(median - 40.0), 5.0);
        BOOST_CHECK_GE(sorted.front(), median - 5.0);
        BOOST_CHECK_LE(sorted.back(), median + 5.0);
    }
    const double drift = std::stod(source_field("rx", "drift-ppm"));
    BOOST_CHECK_CLOSE(drift, 1000.0, 10.0); // it learnt the sender's 0.1 %

    // The tone's timeline is continuous: never re-aligned, no frame dropped
    // or inserted (62 s of the sender's audio last 62 s here, give or take
    // the few milliseconds the latency moved), and it is clean: its THD+N,
    // followed through the loop's pitch corrections in 100 ms windows,
    // counts every concealment (see the cases for the bounds).
    BOOST_CHECK_EQUAL(source_number("rx", "resyncs"), 0u);
    BOOST_CHECK_LE(std::fabs(heard.seconds - kSeconds), 0.01);
    const TrackedTone tracked =
        track_tone(samples, 2, 48000, 1000.0, heard.first + 4800, heard.last - 4800);
    BOOST_TEST_MESSAGE(
        "THD+N " << tracked.thd_n_db << " dB, worst 100 ms " << tracked.worst_window_db
                 << " dB, longest quiet " << heard.longest_quiet << " frames, "
                 << lost - source_number("rx", "recovered") << " packets concealed without FEC");
    BOOST_CHECK_LT(tracked.thd_n_db, max_thd_db);
    BOOST_CHECK_EQUAL(server.stop(SIGTERM), 0);
}

} // namespace

// With FEC alone: two losses in a row (0.25 % of packets at 5 % loss) are
// beyond Opus's one-packet FEC and are concealed by its PLC; after one,
// libopus 1.3's decoder takes about 300 ms to come back to a tone (-15 dB in
// the first 100 ms), whatever it is given next. The bound is what those
// allow: -21 to -32 dB measured, as the double losses fall (single losses
// alone, FEC-recovered: -39 dB and better).
BOOST_AUTO_TEST_CASE(a_lossy_jittery_network_and_a_fast_clock_are_followed_for_a_minute) {
    follow_a_lossy_network_for_a_minute(false, -18.0);
}

// With every packet sent twice, a packet is missing only when both copies
// are: FEC rebuilds nearly all of those, and the minute is clean.
BOOST_AUTO_TEST_CASE(resending_every_packet_keeps_the_tone_clean_through_the_same_network) {
    follow_a_lossy_network_for_a_minute(true, -30.0);
}

BOOST_AUTO_TEST_SUITE_END()
