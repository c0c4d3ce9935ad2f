// The real-time rule for the RTP sink: encoding (Opus with FEC, L16, L24),
// sending, RTCP reports, silence suppression and a refusing network all run
// on the sink's rt thread without allocating, freeing or locking — checked
// by the RT-safety hooks, not promised. Packets really leave: a socket in
// the test receives them.
#define BOOST_TEST_MODULE rtp_rt_safety
#include <boost/test/unit_test.hpp>

#include "audiod/audiod.h"
#include "os/rt_scope.h"
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
            sender.write_rt(frames, quantum);
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

BOOST_AUTO_TEST_CASE(a_refusing_network_costs_counted_packets_and_never_blocks) {
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
    BOOST_TEST_MESSAGE(s.packets << " sent, " << s.dropped << " dropped");
    BOOST_CHECK_GT(s.dropped, 0u);
    BOOST_CHECK_EQUAL(s.last_error, ECONNREFUSED);
}
