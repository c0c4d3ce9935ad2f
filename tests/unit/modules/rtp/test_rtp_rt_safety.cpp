// The real-time rule for the RTP sink: encoding (Opus with FEC, L16, L24),
// sending, RTCP reports, silence suppression and a refusing network all run
// on the sink's rt thread without allocating, freeing or locking — checked
// by the RT-safety hooks, not promised. Packets really leave: a socket in
// the test receives them.
#define BOOST_TEST_MODULE rtp_rt_safety
#include <boost/test/unit_test.hpp>

#include "audiod/audiod.h"
#include "os/rt_scope.h"
#include "rtcp.h"
#include "rtp_sender.h"
#include "unit/server/rt_hooks.h"

#include <arpa/inet.h>
#include <cmath>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

using namespace audiod;
using namespace audiod::rtp;
using audiod::test::rt_violations;

namespace {

// A UDP socket on 127.0.0.1 (an even port and the next one free); counts
// what arrives.
struct Receiver {
    Receiver() {
        for (uint16_t p = 41000 + static_cast<uint16_t>(getpid() % 400) * 20;; p += 2) {
            fd = socket(AF_INET, SOCK_DGRAM | SOCK_NONBLOCK, 0);
            sockaddr_in a{};
            a.sin_family = AF_INET;
            a.sin_port = htons(p);
            a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
            if (bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0) {
                port = p;
                return;
            }
            close(fd);
        }
    }
    ~Receiver() { close(fd); }
    size_t drain() {
        size_t n = 0;
        uint8_t buffer[2048];
        while (recv(fd, buffer, sizeof buffer, 0) > 0) {
            ++n;
        }
        return n;
    }
    int fd = -1;
    uint16_t port = 0;
    size_t received = 0;
};

RtpSendOptions options_for(Encoding encoding, uint32_t frames, bool fec) {
    RtpSendOptions o;
    o.encoding = encoding;
    o.packet_frames = frames;
    o.ptime_ms = frames / 48.0;
    o.bitrate = 64000;
    o.fec = fec;
    o.mtu = 9000;
    return o;
}

// Takes every datagram waiting, in order.
std::vector<std::vector<uint8_t>> take_all(const Receiver& receiver) {
    std::vector<std::vector<uint8_t>> datagrams;
    uint8_t buffer[2048];
    for (ssize_t n; (n = recv(receiver.fd, buffer, sizeof buffer, 0)) > 0;) {
        datagrams.emplace_back(buffer, buffer + n);
    }
    return datagrams;
}

uint16_t sequence_of(const std::vector<uint8_t>& packet) {
    return static_cast<uint16_t>(packet[2] << 8 | packet[3]);
}

// Feeds `seconds` of a tone, then of silence, in 256-frame quanta, inside an
// RT scope as the sink's cycle would; between quanta the receiver (if any)
// takes what arrived, as a real one would keep up.
void feed_rt(RtpSender& sender, double seconds, Receiver* receiver = nullptr) {
    const size_t quantum = 256;
    std::vector<float> f(quantum * 2);
    std::vector<int16_t> s16(quantum * 2);
    std::vector<int32_t> s32(quantum * 2);
    const auto quanta = static_cast<size_t>(seconds * 48000 / quantum);
    for (size_t q = 0; q < 2 * quanta; ++q) {
        const bool tone = q < quanta;
        for (size_t i = 0; i < quantum; ++i) {
            const double v =
                tone ? 0.5 * std::sin(2 * M_PI * 1000 * double(q * quantum + i) / 48000) : 0;
            f[2 * i] = f[2 * i + 1] = static_cast<float>(v);
            s16[2 * i] = s16[2 * i + 1] = static_cast<int16_t>(v * 32767);
            s32[2 * i] = s32[2 * i + 1] = static_cast<int32_t>(v * 2147483647.0);
        }
        const void* frames =
            sender.sample_format() == AUDIOD_FORMAT_F32LE   ? static_cast<const void*>(f.data())
            : sender.sample_format() == AUDIOD_FORMAT_S16LE ? static_cast<const void*>(s16.data())
                                                            : static_cast<const void*>(s32.data());
        {
            RtScope scope;
            sender.write_rt(frames, quantum, 0);
        }
        if (receiver != nullptr) {
            receiver->received += receiver->drain();
        }
    }
    RtScope scope;
    sender.stop_rt();
}

std::unique_ptr<RtpSender> make(const RtpSendOptions& o, uint16_t port) {
    std::string error;
    const auto to = resolve_endpoint("127.0.0.1", port, error);
    BOOST_REQUIRE_MESSAGE(to, error);
    auto sender = RtpSender::create(o, 48000, 2, *to, error);
    BOOST_REQUIRE_MESSAGE(sender, error);
    return sender;
}

} // namespace

BOOST_AUTO_TEST_CASE(sending_never_allocates_or_locks) {
    for (const auto& o :
         {options_for(Encoding::opus, 480, true), options_for(Encoding::opus, 120, false),
          options_for(Encoding::l16, 240, false), options_for(Encoding::l24, 48, false)}) {
        Receiver receiver;
        auto sender = make(o, receiver.port);
        rt_violations().reset();
        feed_rt(*sender, 2.0, &receiver);
        BOOST_CHECK_EQUAL(rt_violations().allocations.load(), 0u);
        BOOST_CHECK_EQUAL(rt_violations().frees.load(), 0u);
        BOOST_CHECK_EQUAL(rt_violations().locks.load(), 0u);
        const SenderStats s = sender->stats();
        // Two seconds of tone, one of silence still sent, then suppressed.
        const uint64_t expected = 3 * 48000 / o.packet_frames;
        BOOST_TEST_MESSAGE(s.packets << " packets sent, " << expected << " expected");
        BOOST_CHECK_LE(s.packets, expected + 2);
        BOOST_CHECK_GE(s.packets + 2, expected);
        BOOST_CHECK(s.silent);
        BOOST_CHECK_EQUAL(s.dropped, 0u);
        BOOST_CHECK_EQUAL(s.encode_errors, 0u);
        BOOST_CHECK_EQUAL(receiver.received + receiver.drain(), s.packets);
    }
}

// With `resend`, every packet goes out twice, byte for byte, the copy
// just ahead of the next packet, a ptime after its original: sequence
// numbers on the wire run N, N, N+1, N+1, ... Still without allocating.
BOOST_AUTO_TEST_CASE(resend_sends_each_packet_again_a_packet_later) {
    RtpSendOptions o = options_for(Encoding::opus, 480, true);
    o.resend = true;
    Receiver receiver;
    auto sender = make(o, receiver.port);
    std::vector<std::vector<uint8_t>> wire;
    const size_t quantum = 480;
    std::vector<float> tone(quantum * 2);
    for (size_t q = 0; q < 20; ++q) {
        for (size_t i = 0; i < quantum; ++i) {
            tone[2 * i] = tone[2 * i + 1] = static_cast<float>(
                0.5 * std::sin(2 * M_PI * 1000 * double(q * quantum + i) / 48000));
        }
        rt_violations().reset();
        {
            RtScope scope;
            sender->write_rt(tone.data(), quantum, 0);
        }
        BOOST_CHECK_EQUAL(rt_violations().total(), 0u);
        for (auto& d : take_all(receiver)) {
            wire.push_back(std::move(d));
        }
    }
    // A packet's time of silence (still sent: silence stops the stream only
    // after a second).
    std::vector<float> silence(quantum * 2, 0.0f);
    sender->write_rt(silence.data(), quantum, 0);
    for (auto& d : take_all(receiver)) {
        wire.push_back(std::move(d));
    }
    const SenderStats s = sender->stats();
    BOOST_CHECK_EQUAL(s.packets, 21u);
    BOOST_CHECK_EQUAL(s.resent, 20u);
    BOOST_REQUIRE_EQUAL(wire.size(), 41u);
    // wire: P0, copy of P0, P1, copy of P1, ..., P20 (its copy is due with
    // the next packet time).
    for (size_t k = 0; k < 20; ++k) {
        const auto& original = wire[2 * k];
        const auto& copy = wire[2 * k + 1];
        BOOST_CHECK(copy == original);
        BOOST_CHECK_EQUAL(sequence_of(wire[2 * k + 2]),
                          static_cast<uint16_t>(sequence_of(original) + 1));
    }
}

// Refused sends are made again (send_rt): counted, no packet lost.
BOOST_AUTO_TEST_CASE(a_refusing_network_is_counted_and_never_blocks) {
    uint16_t port = 0;
    {
        Receiver gone; // a port where nothing listens once this closes
        port = gone.port;
    }
    auto sender = make(options_for(Encoding::opus, 480, false), port);
    rt_violations().reset();
    feed_rt(*sender, 1.0);
    BOOST_CHECK_EQUAL(rt_violations().total(), 0u);
    const SenderStats s = sender->stats();
    BOOST_TEST_MESSAGE(s.packets << " sent, " << s.refused << " refused, " << s.dropped
                                 << " dropped");
    BOOST_CHECK_GT(s.refused, 0u);
    BOOST_CHECK_EQUAL(s.dropped, 0u);
    BOOST_CHECK_EQUAL(s.last_error, ECONNREFUSED);
}

// A receiver that opens after its sender misses the report sent with the
// first packet: the first four come a fifth of a second apart (by the RTP
// times they carry), the rest a second apart.
BOOST_AUTO_TEST_CASE(the_first_reports_come_five_a_second) {
    Receiver receiver;
    const int rtcp = socket(AF_INET, SOCK_DGRAM | SOCK_NONBLOCK, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_port = htons(static_cast<uint16_t>(receiver.port + 1));
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    BOOST_REQUIRE_EQUAL(bind(rtcp, reinterpret_cast<sockaddr*>(&a), sizeof a), 0);
    auto sender = make(options_for(Encoding::l16, 240, false), receiver.port);
    feed_rt(*sender, 3.0, &receiver);
    std::vector<uint32_t> times;
    uint8_t buffer[2048];
    for (ssize_t n; (n = recv(rtcp, buffer, sizeof buffer, 0)) > 0;) {
        RtcpSummary s;
        if (parse_rtcp({buffer, static_cast<size_t>(n)}, s) && s.has_report) {
            times.push_back(s.report.rtp_timestamp - sender->latency_frames());
        }
    }
    close(rtcp);
    BOOST_REQUIRE_GE(times.size(), 7u);
    for (size_t i = 1; i < times.size(); ++i) {
        const uint32_t apart = times[i] - times[i - 1];
        // (Sent at the cycle that passes the interval: within a quantum.)
        const uint32_t expected = i < 4 ? 9600 : 48000;
        BOOST_CHECK_MESSAGE(apart + 256 >= expected && apart <= expected + 256,
                            "report " << i << " came " << apart << " frames after the last");
    }
}
