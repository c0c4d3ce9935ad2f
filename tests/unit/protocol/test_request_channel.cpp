// The client end of the control socket against a scripted server on a
// socket pair: a reply that comes after its request was given up on is
// skipped, and a stream it made is closed rather than left to no one.
#include "protocol/request_channel.h"

#include <boost/test/unit_test.hpp>

#include <poll.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <sys/socket.h>

using namespace audiod;
using namespace audiod::proto;

namespace {

struct ScriptedServer {
    ScriptedServer() {
        int fds[2];
        BOOST_REQUIRE(::socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, fds) == 0);
        client = RequestChannel(UniqueFd(fds[0]));
        server.reset(fds[1]);
    }

    // The next request the client sent (waited for up to 5 s).
    Envelope next(Packet& packet) {
        BOOST_REQUIRE_EQUAL(wait_for(server.get(), POLLIN, Deadline::after_ms(5000)), 0);
        BOOST_REQUIRE_EQUAL(recv_packet(server.get(), packet), 0);
        const auto envelope = parse_envelope(packet.bytes);
        BOOST_REQUIRE(envelope);
        return *envelope;
    }

    template <class Reply>
    void answer(uint32_t seq, const Reply& reply, std::span<const int> fds = {}) {
        BOOST_REQUIRE_EQUAL(send_packet(server.get(), encode(seq, reply), fds), 0);
    }

    // A StreamCreated for `seq`, with its ring and wake-up descriptors.
    void late_stream(uint32_t seq, uint32_t id) {
        StreamCreated created;
        created.stream_id = id;
        created.capacity_frames = 4800;
        created.memory_bytes = 4096;
        const UniqueFd ring(::memfd_create("ring", MFD_CLOEXEC));
        const UniqueFd wake(::eventfd(0, EFD_CLOEXEC));
        BOOST_REQUIRE(ring && wake);
        const int fds[] = {ring.get(), wake.get()};
        answer(seq, created, fds);
    }

    // The next request is the close of stream `id`.
    void expect_close(uint32_t id) {
        Packet packet;
        const Envelope envelope = next(packet);
        BOOST_REQUIRE(envelope.type == MsgType::stream_command);
        StreamCommand command;
        BOOST_REQUIRE(decode(envelope.body, command));
        BOOST_CHECK_EQUAL(command.stream_id, id);
        BOOST_CHECK_EQUAL(command.op, static_cast<uint32_t>(StreamOp::close));
    }

    RequestChannel client;
    UniqueFd server;
};

} // namespace

BOOST_AUTO_TEST_SUITE(request_channel)

// The server answers a CreateStream only after the client gave up on it; the
// client's next call reads that late reply on its way to its own.
BOOST_AUTO_TEST_CASE(a_stream_made_for_a_request_given_up_on_is_closed) {
    ScriptedServer s;
    CreateStream create;
    create.rate = 48000;
    create.channels = 2;
    Packet reply;
    BOOST_REQUIRE_NE(s.client.call(create, MsgType::stream_created, &reply, Deadline::after_ms(50)),
                     0);
    Packet request;
    const Envelope asked = s.next(request);
    BOOST_REQUIRE(asked.type == MsgType::create_stream);
    s.late_stream(asked.seq, 42);
    // The answer to the GetInfo the client is about to send.
    s.answer(asked.seq + 1, ServerInfo{});

    ServerInfo info;
    BOOST_REQUIRE_EQUAL(s.client.call_for(GetInfo{}, &info, Deadline::after_ms(5000)), 0);
    BOOST_CHECK(s.next(request).type == MsgType::get_info);
    s.expect_close(42);
}

BOOST_AUTO_TEST_CASE(a_late_stream_that_pump_reads_is_closed) {
    ScriptedServer s;
    Packet reply;
    BOOST_REQUIRE_NE(
        s.client.call(CreateStream{}, MsgType::stream_created, &reply, Deadline::after_ms(50)), 0);
    Packet request;
    const Envelope asked = s.next(request);
    s.late_stream(asked.seq, 7);
    BOOST_REQUIRE_EQUAL(wait_for(s.client.fd(), POLLIN, Deadline::after_ms(5000)), 0);
    BOOST_REQUIRE_EQUAL(s.client.pump(), 0);
    s.expect_close(7);
}

BOOST_AUTO_TEST_SUITE_END()
