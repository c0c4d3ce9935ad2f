// The RTP sink, heard by programs we did not write: ffmpeg reads the SDP
// file audiod wrote and GStreamer's RTP receivers decode the stream, Opus
// and L16, unicast, multicast and IPv6 — a 1 kHz tone comes out at the
// right pitch, level and length. Its packets follow RFC 3550 (checked
// byte by byte by a socket in the test), SAP announces it, and a network
// that refuses every packet costs counted packets, never the pace.
// PulseAudio's receiver finds the sink by SAP and plays it.
#include "helpers.h"
#include "rtcp.h"
#include "rtp_packet.h"
#include "sap.h"
#include "sdp.h"

#include <boost/test/unit_test.hpp>

#include <algorithm>
#include <arpa/inet.h>
#include <cmath>
#include <csignal>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <netinet/in.h>
#include <sstream>
#include <sys/socket.h>

using namespace audiod;
using namespace audiod::test;
using namespace std::chrono_literals;
namespace wire = audiod::rtp;

namespace {

std::string rtp_server_config(const std::string& sink_options) {
    return "[server]\nrt-priority = 0\n\n[sinks.main]\ntype = \"null\"\n\n"
           "[sinks.net]\ntype = \"rtp\"\n" +
           sink_options;
}

// A receiving program's argv, writing a float WAV to OUT.
using Receiver = std::function<std::vector<std::string>(const std::string& out)>;

Receiver ffmpeg_from(const std::string& sdp) {
    return [sdp](const std::string& out) {
        return std::vector<std::string>{installed("ffmpeg"),
                                        "-nostdin",
                                        "-loglevel",
                                        "error",
                                        "-protocol_whitelist",
                                        "file,udp,rtp",
                                        "-i",
                                        sdp,
                                        "-c:a",
                                        "pcm_f32le",
                                        "-y",
                                        out};
    };
}

Receiver gstreamer(const std::string& address, uint16_t port, const std::string& caps,
                   const std::vector<std::string>& decode) {
    return [=](const std::string& out) {
        std::vector<std::string> argv{installed("gst-launch-1.0"),
                                      "-q",
                                      "-e",
                                      "udpsrc",
                                      "address=" + address,
                                      "port=" + std::to_string(port),
                                      "caps=application/x-rtp,media=audio,payload=96,"
                                      "clock-rate=48000," +
                                          caps,
                                      "!",
                                      "rtpjitterbuffer",
                                      "latency=50"};
        for (const std::string& element : decode) {
            argv.insert(argv.end(), {"!", element});
        }
        argv.insert(argv.end(), {"!", "audioconvert", "!", "audio/x-raw,format=F32LE,channels=2",
                                 "!", "wavenc", "!", "filesink", "location=" + out});
        return argv;
    };
}

// Starts `receiver`, plays a 1 s 1 kHz tone at half scale into the RTP
// sink, waits until the sink has sent all of it (it stops sending a second
// after the tone), stops the receiver as Ctrl-C would and measures what it
// decoded: the tone's length within one packet, its level within 0.5 dB,
// its THD+N (at 1 kHz: a wrong pitch fails) below `max_thd_db`.
void hear_through(const Receiver& receiver, uint16_t port, double ptime_ms, double max_thd_db) {
    TempDir dir;
    write_tone_wav(dir.file("tone.wav"), 48000, 1000.0, 1.0);
    BackgroundProgram listening(receiver(dir.file("heard.wav")));
    if (!wait_for_udp_listener(port)) {
        // Why, for whoever meets it next (seen once in a stress run).
        const bool exited = listening.has_exited();
        const ProgramResult r = listening.finish(std::chrono::seconds(5));
        BOOST_FAIL("the receiver never bound its port; it " << (exited ? "had exited" : "still ran")
                                                            << " with status " << r.status << ":\n"
                                                            << r.out << r.err);
    }
    // Before the receiver listened, a unicast sink's packets were refused.
    const uint64_t dropped_before = sink_number("net", "dropped");
    const ProgramResult played = run_tool(
        "audioplay",
        {"--quiet", "--sink", "net", "--latency-ms", kExactPlayerMs, dir.file("tone.wav")}, 60s);
    BOOST_REQUIRE_MESSAGE(played.status == 0, played.err);
    BOOST_REQUIRE(eventually([] { return sink_field("net", "sending") == "no"; }, 30s));
    // The receiver may still be behind (starved on a loaded machine; an
    // ffmpeg stopped while it still probes the stream writes no sound, "no
    // tone was heard" once in a stress pass): three quarters of the tone
    // (f32 stereo) in its file before it is stopped.
    const std::string heard_path = dir.file("heard.wav");
    const auto written = [&] {
        std::error_code error;
        const auto size = std::filesystem::file_size(heard_path, error);
        return error ? 0 : size;
    };
    BOOST_CHECK_MESSAGE(eventually([&] { return written() >= 44 + 288000; }, 30s),
                        "the receiver wrote " << written() << " bytes");
    ::kill(listening.pid(), SIGINT);
    const ProgramResult heard = listening.finish(30s);
    BOOST_TEST_MESSAGE("receiver: status " << heard.status << " " << heard.err);
    const HeardTone tone = hear_tone(read_wav_f32(heard_path), 2, 48000, 1000.0);
    BOOST_CHECK_LE(std::fabs(tone.seconds - 1.0), ptime_ms / 1000.0 + 1.0 / 48000);
    BOOST_CHECK_LE(std::fabs(20 * std::log10(tone.tone.amplitude / 0.5)), 0.5);
    BOOST_CHECK_LT(tone.tone.thd_n_db, max_thd_db);
    BOOST_CHECK_EQUAL(sink_number("net", "dropped"), dropped_before);
}

// A UDP socket bound to `port` on `address` (joining it if a group), with
// SO_REUSEADDR so that several tests and receivers may listen to SAP.
class UdpListener {
public:
    UdpListener(const std::string& address, uint16_t port) {
        fd_ = ::socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
        const int on = 1;
        ::setsockopt(fd_, SOL_SOCKET, SO_REUSEADDR, &on, sizeof on);
        sockaddr_in a{};
        a.sin_family = AF_INET;
        a.sin_port = htons(port);
        ::inet_pton(AF_INET, address.c_str(), &a.sin_addr);
        BOOST_REQUIRE(::bind(fd_, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0);
        if (IN_MULTICAST(ntohl(a.sin_addr.s_addr))) {
            ip_mreqn join{};
            join.imr_multiaddr = a.sin_addr;
            BOOST_REQUIRE(::setsockopt(fd_, IPPROTO_IP, IP_ADD_MEMBERSHIP, &join, sizeof join) ==
                          0);
        }
        const timeval timeout{0, 200'000};
        ::setsockopt(fd_, SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof timeout);
        // Room for seconds of packets while a loaded machine holds this
        // thread up (beyond rmem_max where the tests run as root), and the
        // kernel's count of what still did not fit: a CI run under ASan saw
        // 52 packets missing between two it read.
        const int bytes = 8 << 20;
        if (::setsockopt(fd_, SOL_SOCKET, SO_RCVBUFFORCE, &bytes, sizeof bytes) != 0) {
            ::setsockopt(fd_, SOL_SOCKET, SO_RCVBUF, &bytes, sizeof bytes);
        }
        ::setsockopt(fd_, SOL_SOCKET, SO_RXQ_OVFL, &on, sizeof on);
    }
    ~UdpListener() { ::close(fd_); }
    UdpListener(const UdpListener&) = delete;
    // The next datagram, or empty after 200 ms.
    std::vector<uint8_t> receive() {
        std::vector<uint8_t> buffer(65536);
        iovec data{buffer.data(), buffer.size()};
        alignas(cmsghdr) char control[CMSG_SPACE(sizeof(uint32_t))];
        msghdr message{};
        message.msg_iov = &data;
        message.msg_iovlen = 1;
        message.msg_control = control;
        message.msg_controllen = sizeof control;
        const ssize_t n = ::recvmsg(fd_, &message, 0);
        for (cmsghdr* c = CMSG_FIRSTHDR(&message); n > 0 && c != nullptr;
             c = CMSG_NXTHDR(&message, c)) {
            if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SO_RXQ_OVFL) {
                std::memcpy(&dropped_, CMSG_DATA(c), sizeof dropped_);
            }
        }
        buffer.resize(n > 0 ? static_cast<size_t>(n) : 0);
        return buffer;
    }
    // Datagrams the kernel dropped for want of room in this socket, as of
    // the last one received.
    [[nodiscard]] uint32_t dropped() const { return dropped_; }

private:
    int fd_ = -1;
    uint32_t dropped_ = 0;
};

} // namespace

BOOST_AUTO_TEST_SUITE(rtp)

BOOST_AUTO_TEST_CASE(ffmpeg_decodes_l16_unicast_and_opus_multicast_from_the_sdp_file) {
    for (const bool opus : {false, true}) {
        TempDir dir;
        const uint16_t port = free_udp_port_pair();
        const std::string sdp = dir.file("net.sdp");
        ServerProcess server(rtp_server_config(
            std::string("destination = \"") + (opus ? "239.255.77.1" : "127.0.0.1") +
            "\"\nport = " + std::to_string(port) + "\npayload = \"" + (opus ? "opus" : "l16") +
            "\"\nsdp-file = \"" + sdp + "\"\n"));
        BOOST_TEST_MESSAGE((opus ? "Opus" : "L16")
                           << ":\n"
                           << [&] {
                                  std::ifstream in(sdp);
                                  return std::string(std::istreambuf_iterator<char>(in), {});
                              }());
        hear_through(ffmpeg_from(sdp), port, opus ? 10 : 5, opus ? -30 : -60);
        BOOST_CHECK_EQUAL(server.stop(SIGTERM), 0);
        BOOST_CHECK_MESSAGE(::access(sdp.c_str(), F_OK) != 0, "the SDP file outlived its sink");
    }
}

BOOST_AUTO_TEST_CASE(gstreamer_decodes_opus_and_l16_over_ipv6) {
    {
        const uint16_t port = free_udp_port_pair();
        ServerProcess server(rtp_server_config(
            "destination = \"127.0.0.1\"\nport = " + std::to_string(port) + "\nptime = 5\n"));
        hear_through(gstreamer("127.0.0.1", port, "encoding-name=OPUS,sprop-stereo=(string)1",
                               {"rtpopusdepay", "opusdec"}),
                     port, 5, -30);
        BOOST_CHECK_EQUAL(server.stop(SIGTERM), 0);
    }
    {
        const uint16_t port = free_udp_port_pair();
        ServerProcess server(rtp_server_config(
            "destination = \"::1\"\nport = " + std::to_string(port) + "\npayload = \"l16\"\n"));
        hear_through(gstreamer("::1", port, "encoding-name=L16,channels=2", {"rtpL16depay"}), port,
                     5, -60);
        BOOST_CHECK_EQUAL(server.stop(SIGTERM), 0);
    }
}

BOOST_AUTO_TEST_CASE(packets_and_reports_follow_rfc_3550) {
    const uint16_t port = free_udp_port_pair();
    UdpListener media("127.0.0.1", port);
    UdpListener control("127.0.0.1", port + 1);
    ServerProcess server(rtp_server_config(
        "destination = \"127.0.0.1\"\nport = " + std::to_string(port) + "\npayload = \"l16\"\n"));
    // Sound after the sink has gone quiet: the first packet of it is marked.
    BOOST_REQUIRE(eventually([] { return sink_field("net", "sending") == "no"; }, 30s));
    while (!media.receive().empty()) {
        // The sink's first second, queued while the test waited: not needed.
    }
    PlayingClient client({"--signal", "counter", "--sink", "net"});
    std::vector<wire::RtpHeader> headers;
    std::vector<size_t> sizes;
    const auto deadline = std::chrono::steady_clock::now() + 30s;
    while (headers.size() < 400 && std::chrono::steady_clock::now() < deadline) {
        const auto d = media.receive();
        wire::RtpPacket p;
        if (!d.empty() && wire::parse_packet(d, p) == wire::PacketError::none) {
            headers.push_back(p.header);
            sizes.push_back(p.payload.size());
        }
    }
    client.stop_without_underruns();
    BOOST_REQUIRE_EQUAL(headers.size(), 400u);
    // The first packet heard is the first after the quiet: marked.
    BOOST_CHECK(headers[0].marker);
    // Sequence and timestamps step by one packet, if this test read every
    // packet the sink sent (else the gaps are its own).
    const uint32_t dropped_here = media.dropped();
    if (dropped_here > 0) {
        BOOST_TEST_MESSAGE(dropped_here << " packets did not fit this test's socket: their "
                                           "sequence numbers and timestamps are not checked");
    }
    size_t marked = 0;
    for (size_t i = 0; i < headers.size(); ++i) {
        const auto& h = headers[i];
        BOOST_CHECK_EQUAL(h.payload_type, 96);
        BOOST_CHECK_EQUAL(sizes[i], 240u * 2 * 2); // 5 ms of s16 stereo
        BOOST_CHECK_EQUAL(h.ssrc, headers[0].ssrc);
        if (i > 0 && dropped_here == 0) {
            BOOST_CHECK_EQUAL(uint16_t(h.sequence - headers[i - 1].sequence), 1);
            const uint32_t step = h.timestamp - headers[i - 1].timestamp;
            // A jump (the quiet) is whole packets, and only a marked packet
            // follows one.
            BOOST_CHECK_EQUAL(step % 240, 0u);
            BOOST_CHECK_EQUAL(step > 240, h.marker);
        }
        marked += h.marker;
    }
    BOOST_CHECK_EQUAL(marked, 1u);

    // Sender reports: the same SSRC, the wall clock, an RTP time near the
    // packets', a CNAME; and a BYE when the sink goes.
    bool report = false;
    for (int i = 0; i < 100 && !report; ++i) {
        const auto d = control.receive();
        wire::RtcpSummary s;
        if (!d.empty() && wire::parse_rtcp(d, s) && s.has_report) {
            report = true;
            BOOST_CHECK_EQUAL(s.report.ssrc, headers[0].ssrc);
            const int64_t skew = int64_t(s.report.ntp_time >> 32) - int64_t(wire::ntp_now() >> 32);
            BOOST_CHECK_LE(std::abs(skew), 60);
            BOOST_CHECK_GT(s.report.packet_count, 0u);
            BOOST_CHECK(std::string(d.begin(), d.end()).find("@127.0.0.1") != std::string::npos);
        }
    }
    BOOST_CHECK(report);
    BOOST_REQUIRE_EQUAL(run_tool("audioctl", {"unload-sink", "net"}).status, 0);
    bool bye = false;
    for (int i = 0; i < 50 && !bye; ++i) {
        const auto d = control.receive();
        wire::RtcpSummary s;
        bye = !d.empty() && wire::parse_rtcp(d, s) && s.bye;
    }
    BOOST_CHECK_MESSAGE(bye, "no RTCP BYE when the sink was unloaded");
    BOOST_CHECK_EQUAL(server.stop(SIGTERM), 0);
}

BOOST_AUTO_TEST_CASE(a_sink_loaded_at_run_time_announces_itself_by_sap_and_says_goodbye) {
    UdpListener sap(wire::kSapGroupIpv4, wire::kSapPort);
    ServerProcess server(rtp_server_config("destination = \"127.0.0.1\"\n"));
    const uint16_t port = free_udp_port_pair();
    const std::string name = "announced-" + std::to_string(::getpid());
    const ProgramResult loaded =
        run_tool("audioctl", {"load-sink", "rtp", name, "destination=239.255.77.2",
                              "port=" + std::to_string(port), "payload=l24", "announce=true",
                              "session-name=" + name});
    BOOST_REQUIRE_MESSAGE(loaded.status == 0, loaded.err);
    // Announcements of other sessions (other tests) may arrive too.
    const auto find = [&](bool deletion) -> std::optional<std::string> {
        const auto deadline = std::chrono::steady_clock::now() + 30s;
        while (std::chrono::steady_clock::now() < deadline) {
            const auto d = sap.receive();
            const char* why = nullptr;
            const auto message = wire::parse_sap(d, why);
            if (message && message->deletion == deletion &&
                message->sdp.find("s=" + name + "\n") != std::string_view::npos) {
                return std::string(message->sdp);
            }
        }
        return std::nullopt;
    };
    const auto announced = find(false);
    BOOST_REQUIRE_MESSAGE(announced, "no SAP announcement of " << name);
    std::string error;
    const auto sdp = wire::parse_sdp(*announced, error);
    BOOST_REQUIRE_MESSAGE(sdp, error << "\n" << *announced);
    BOOST_CHECK_EQUAL(sdp->address, "239.255.77.2");
    BOOST_CHECK_EQUAL(sdp->port, port);
    BOOST_CHECK(sdp->encoding == wire::Encoding::l24);
    BOOST_CHECK_EQUAL(sdp->channels, 2u);
    BOOST_CHECK_GE(sink_number(name, "announced"), 1u);
    BOOST_REQUIRE_EQUAL(run_tool("audioctl", {"unload-sink", name}).status, 0);
    BOOST_CHECK_MESSAGE(find(true), "no SAP deletion when the sink was unloaded");
    BOOST_CHECK_EQUAL(server.stop(SIGTERM), 0);
}

namespace {

// One try of PulseAudio playing audiod's session: its recording and log,
// or why it went wrong.
struct PulseTry {
    std::string failure; // empty: the tone and a second after it were recorded
    bool pulse_aborted = false;
    std::vector<float> recorded; // float stereo 48 kHz
    std::string log;             // pulseaudio's, without its clients coming and going
};

std::string without_clients(const std::string& log) {
    std::ostringstream out;
    std::istringstream lines(log);
    for (std::string line; std::getline(lines, line);) {
        if (line.find("client.c") == std::string::npos &&
            line.find("protocol-native.c") == std::string::npos) {
            out << line << "\n";
        }
    }
    return out.str();
}

// Starts a private pulseaudio whose module-rtp-recv listens for SAP on
// `sap_group`, waits until it has found `session` and parec records its
// null sink's monitor, plays a 1 s tone into audiod's sink "net", and
// waits until the recording holds the tone and a second after it.
PulseTry play_through_pulseaudio(const TempDir& dir, const std::string& sap_group,
                                 const std::string& session) {
    std::filesystem::create_directories(dir.file("run"));
    std::filesystem::permissions(dir.file("run"), std::filesystem::perms::owner_all);
    const std::string socket = dir.file("pulse.socket");
    const std::map<std::string, std::string> env{
        {"XDG_RUNTIME_DIR", dir.file("run")}, {"HOME", dir.path()}, {"PULSE_SERVER", socket}};
    // --no-cpu-limit: PulseAudio otherwise ends itself when it thinks it
    // uses too much CPU.
    BackgroundProgram pulse({installed("pulseaudio"), "-n", "--daemonize=no", "--exit-idle-time=-1",
                             "--no-cpu-limit=yes", "--use-pid-file=no", "--disable-shm=yes",
                             "--log-target=stderr", "--log-level=info", "-L",
                             "module-native-protocol-unix auth-anonymous=1 socket=" + socket, "-L",
                             "module-null-sink sink_name=out rate=48000", "-L",
                             "module-rtp-recv sap_address=" + sap_group + " sink=out"},
                            env);
    PulseTry result;
    const auto finish = [&](BackgroundProgram* recording, const std::string& failure) {
        if (recording != nullptr) {
            ::kill(recording->pid(), SIGINT);
            const ProgramResult parec = recording->finish(10s);
            result.recorded = float_samples(parec.out);
            result.failure = failure.empty() ? "" : failure + "\nparec's errors: " + parec.err;
        } else {
            result.failure = failure;
        }
        ::kill(pulse.pid(), SIGTERM);
        result.log = without_clients(pulse.finish(10s).err);
        result.pulse_aborted =
            result.log.find("rtp-gstreamer.c: Assertion 'pa_mempool_block_size_max") !=
                std::string::npos ||
            result.log.find("memblock.c: Assertion 'length' failed") != std::string::npos;
        return result;
    };
    const auto pactl = [&](const std::vector<std::string>& args) {
        std::vector<std::string> argv{installed("pactl")};
        argv.insert(argv.end(), args.begin(), args.end());
        return run_program(argv, 10s, env);
    };
    // It has found the session when the session's stream is on its sink.
    // SAP repeats every 5 s; a TSan server beside stress-ng may need several.
    // Each wait ends early if pulseaudio has ended (it aborts now and then,
    // below): a dead PulseAudio records nothing, and waiting is wasted time.
    const auto pulse_ended = [&] {
        return std::string(pulse.has_exited() ? "pulseaudio ended; " : "");
    };
    if (!eventually(
            [&] {
                return pulse.has_exited() ||
                       pactl({"list", "sink-inputs"}).out.find(session) != std::string::npos;
            },
            60s) ||
        pulse.has_exited()) {
        return finish(nullptr, pulse_ended() + "pulseaudio never found the session: " +
                                   pactl({"list", "sink-inputs"}).out +
                                   "\naudiod: " + run_tool("audioctl", {"list", "sinks"}).out);
    }
    BackgroundProgram recording({installed("parec"), "--device=out.monitor", "--raw",
                                 "--format=float32le", "--rate=48000", "--channels=2",
                                 "--latency-msec=20"},
                                env);
    // A second of the steady (silent) stream recorded: parec is connected
    // and PulseAudio has settled.
    if (!eventually(
            [&] { return pulse.has_exited() || recording.output_so_far().size() >= 48000 * 8; },
            60s) ||
        pulse.has_exited()) {
        return finish(&recording, pulse_ended() + "parec recorded " +
                                      std::to_string(recording.output_so_far().size()) +
                                      " bytes in 60 s; PulseAudio's source outputs:\n" +
                                      pactl({"list", "source-outputs"}).out);
    }
    write_tone_wav(dir.file("tone.wav"), 48000, 1000.0, 1.0);
    const ProgramResult played = run_tool(
        "audioplay",
        {"--quiet", "--sink", "net", "--latency-ms", kExactPlayerMs, dir.file("tone.wav")}, 60s);
    if (played.status != 0) {
        return finish(&recording, "audioplay failed: " + played.err);
    }
    // PulseAudio plays it half a second later (its default latency).
    const bool followed = eventually(
        [&] {
            if (pulse.has_exited()) {
                return true;
            }
            const std::vector<float> samples = float_samples(recording.output_so_far());
            const LoudSpan span = loud_span(samples, 2);
            return span.sounded() && samples.size() / 2 > span.last + 48000;
        },
        30s);
    if (pulse.has_exited()) {
        return finish(&recording, "pulseaudio ended before the tone and a second after it "
                                  "were recorded");
    }
    return finish(&recording,
                  followed ? "" : "the tone and a second after it were not recorded in 30 s");
}

} // namespace

// PulseAudio 16's receiver (module-rtp-recv) finds audiod's L16 session by
// SAP and plays it: a private pulseaudio with a null sink whose monitor
// parec records. Debian builds PulseAudio's RTP on GStreamer, whose
// receiver accepts only payload type 127 for 48 kHz L16 (what its own
// sender uses), so the sink says payload-type = 127. PulseAudio's receiver
// expects a steady stream: packets that start after a pause are trimmed to
// its latency (the first 0.4 s of the tone were lost that way), so the
// sink keeps sending through silence and the tone comes once it has settled.
// PulseAudio would play every session it finds, other tests' too, so this
// session is announced, and PulseAudio listens, on a group of its own.
BOOST_AUTO_TEST_CASE(pulseaudio_finds_the_session_by_sap_and_plays_it) {
    TempDir dir;
    const uint16_t port = free_udp_port_pair();
    const std::string session = "audiod for pulseaudio " + std::to_string(port);
    const std::string sap_group =
        "239.255." + std::to_string(port >> 8) + "." + std::to_string(port & 0xff);
    ServerProcess server(rtp_server_config(
        "destination = \"224.0.0.56\"\nport = " + std::to_string(port) +
        "\npayload = \"l16\"\npayload-type = 127\nsuppress-silence = false\nannounce = true\n"
        "sap-address = \"" +
        sap_group + "\"\nsession-name = \"" + session + "\"\n"));
    // PulseAudio 16's GStreamer receiver (pa_rtp_recv in rtp-gstreamer.c)
    // aborts on one of two assertions when the machine holds it, or audiod,
    // up: when more than 64 KiB — 0.34 s of this stream — has queued up
    // between two of its reads (seen in an ASan run), and when it is woken
    // to read with nothing queued, as a read that took two packets leaves
    // the second packet's wake-up behind (pa_memblock_new of 0 bytes,
    // memblock.c's 'length'; seen in a clean-clone CI run). Those are
    // PulseAudio's to fix; here each costs another try, said in the log,
    // and nothing else does.
    PulseTry heard = play_through_pulseaudio(dir, sap_group, session);
    for (int again = 0; again < 2 && heard.pulse_aborted; ++again) {
        std::cerr << "pulseaudio aborted in its RTP receiver (an assertion under "
                     "pa_rtp_recv); trying again\n";
        heard = play_through_pulseaudio(dir, sap_group, session);
    }
    const std::vector<float>& recorded = heard.recorded;
    const LoudSpan span = loud_span(recorded, 2);
    const size_t first = span.first;
    const size_t last = span.last;
    const std::vector<ToneWindow> windows =
        first < last ? measure_tone_windows(recorded, 2, 48000, 1000.0, first, last + 1)
                     : std::vector<ToneWindow>{};
    // What a failure needs to say: where the recording was loud, how each
    // 100 ms of it sounded, and what PulseAudio said meanwhile.
    const auto evidence = [&] {
        std::ostringstream out;
        out << "parec recorded " << recorded.size() / 2 / 48000.0 << " s, loud from "
            << first / 48000.0 << " s to " << last / 48000.0 << " s\n"
            << describe(windows) << "pulseaudio's log, but its clients coming and going:\n"
            << heard.log;
        return out.str();
    };
    BOOST_REQUIRE_MESSAGE(heard.failure.empty(), heard.failure << "\n" << evidence());
    // PulseAudio's receiver resamples to hold its latency, and changes its
    // rate in steps (its log: "New rate of 46957 Hz not within 2‰ of 48000
    // Hz, forcing smaller adjustment"; seen: 998 Hz). One fit over a tone
    // whose pitch stepped measured THD+N -5 dB in a CI run, so each 100 ms
    // is judged at its own pitch: a wrong format, rate, byte order or
    // channel count would be far off in every window, a step in one or two.
    // The tone is 1 s long, at half of full scale.
    const auto clean = [](const ToneWindow& w) {
        return std::fabs(w.frequency - 1000.0) <= 20.0 &&
               std::fabs(20 * std::log10(w.tone.amplitude / 0.5)) <= 0.5 && w.tone.thd_n_db < -50;
    };
    const auto clean_windows = std::count_if(windows.begin(), windows.end(), clean);
    BOOST_CHECK_MESSAGE(std::fabs((last - first + 1) / 48000.0 - 1.0) <= 0.05 && clean_windows >= 7,
                        "PulseAudio's recording of the 1 s tone: " << clean_windows
                                                                   << " clean 100 ms windows\n"
                                                                   << evidence());
    BOOST_CHECK_EQUAL(server.stop(SIGTERM), 0);
}

BOOST_AUTO_TEST_CASE(a_refusing_network_costs_counted_packets_never_the_pace) {
    // Nothing listens on the port: the kernel reports each packet's ICMP
    // "port unreachable" at the next send (ECONNREFUSED), as for a receiver
    // that is down. Refusals are counted, and cost no packet: each refused
    // send is made again.
    const uint16_t port = free_udp_port_pair();
    ServerProcess server(
        rtp_server_config("destination = \"127.0.0.1\"\nport = " + std::to_string(port) + "\n"));
    PlayingClient on_net({"--signal", "counter", "--sink", "net", "--app", "net"});
    PlayingClient on_main({"--signal", "counter", "--sink", "main", "--app", "main"});
    const auto net = wait_for_app_stream("net");
    const auto main = wait_for_app_stream("main");
    BOOST_REQUIRE(net && main);
    BOOST_REQUIRE(eventually([] { return sink_number("net", "refused") >= 50; }, 30s));
    BOOST_CHECK_EQUAL(sink_field("net", "last-error"), "ECONNREFUSED");
    BOOST_CHECK_EQUAL(sink_number("net", "dropped"), 0u);
    // The sink keeps time: a second of wall clock is a second of frames.
    const uint64_t before = sink_number("net", "frames");
    const auto start = std::chrono::steady_clock::now();
    BOOST_REQUIRE(wait_for_more(*net, 48000));
    BOOST_REQUIRE(wait_for_more(*main, 48000));
    const double elapsed =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    const double played = double(sink_number("net", "frames") - before) / 48000;
    BOOST_TEST_MESSAGE(played << " s played in " << elapsed << " s");
    BOOST_CHECK_GE(played, 0.9 * elapsed - 0.1);
    BOOST_CHECK_EQUAL(sink_field("net", "state"), "running");
    on_net.stop_without_underruns();
    on_main.stop_without_underruns();
    BOOST_CHECK_EQUAL(server.stop(SIGTERM), 0);
}

BOOST_AUTO_TEST_CASE(streams_move_in_and_out_and_its_monitor_records_what_it_sends) {
    TempDir dir;
    const uint16_t port = free_udp_port_pair();
    UdpListener media("127.0.0.1", port);
    ServerProcess server(rtp_server_config(
        "destination = \"127.0.0.1\"\nport = " + std::to_string(port) + "\npayload = \"l16\"\n"));
    PlayingClient client({"--signal", "counter", "--sink", "main"});
    const auto id = wait_for_stream(30s);
    BOOST_REQUIRE(id);
    BOOST_REQUIRE(eventually([] { return sink_field("net", "sending") == "no"; }, 30s));
    while (!media.receive().empty()) {
        // The silence the sink sent before it went quiet: the socket holds
        // seconds of it, and the stream's sound would queue behind.
    }
    Recording monitor(dir.file("monitor.wav"), {"--source", "net.monitor"});
    BOOST_REQUIRE_EQUAL(run_tool("audioctl", {"move-stream", std::to_string(*id), "net"}).status,
                        0);
    // (A stress run once saw the sink not sending 30 s after the move;
    // if it happens again, the stream's and the sinks' state say why.)
    BOOST_REQUIRE_MESSAGE(eventually([] { return sink_field("net", "sending") == "yes"; }, 30s),
                          "the sink is not sending the stream moved to it:\n"
                              << run_tool("audioctl", {"--json", "list", "streams"}).out << "\n"
                              << run_tool("audioctl", {"--json", "list", "sinks"}).out);
    // What arrives is the stream's sound, not silence.
    bool sound = false;
    const auto deadline = std::chrono::steady_clock::now() + 30s;
    while (!sound && std::chrono::steady_clock::now() < deadline) {
        const auto d = media.receive();
        wire::RtpPacket p;
        if (!d.empty() && wire::parse_packet(d, p) == wire::PacketError::none) {
            for (const uint8_t b : p.payload) {
                sound = sound || b != 0;
            }
        }
    }
    BOOST_CHECK(sound);
    BOOST_REQUIRE(wait_for_more(*id, 24000));
    BOOST_REQUIRE_EQUAL(run_tool("audioctl", {"move-stream", std::to_string(*id), "main"}).status,
                        0);
    BOOST_CHECK(eventually([] { return sink_field("net", "sending") == "no"; }, 30s));
    monitor.stop();
    client.stop_without_underruns();
    const auto recorded = read_wav_s16(dir.file("monitor.wav"));
    BOOST_CHECK(first_sound(recorded, 2).has_value());
    BOOST_CHECK_EQUAL(server.stop(SIGTERM), 0);
}

BOOST_AUTO_TEST_CASE(bad_options_are_refused_with_the_option_named) {
    ServerProcess server(rtp_server_config("destination = \"127.0.0.1\"\n"));
    const std::pair<std::vector<std::string>, std::string> cases[] = {
        {{"payload=mp3"}, "payload"},
        {{"destination=no-such-host.invalid"}, "destination"},
        {{"ptime=7"}, "ptime"},
        {{"colour=blue"}, "no option 'colour'"},
    };
    for (const auto& [options, needle] : cases) {
        std::vector<std::string> args{"load-sink", "rtp", "bad"};
        args.insert(args.end(), options.begin(), options.end());
        const ProgramResult r = run_tool("audioctl", args);
        BOOST_CHECK_EQUAL(r.status, 1);
        BOOST_CHECK_MESSAGE(r.err.find(needle) != std::string::npos, r.err);
    }
    BOOST_CHECK_EQUAL(sink_field("net", "state"), "running");
    BOOST_CHECK_EQUAL(server.stop(SIGTERM), 0);
}

BOOST_AUTO_TEST_SUITE_END()
