// A pulse connection's handshake and command dispatch (pulse/session.h),
// fed with what real clients sent and with what no client should send.
#include "pulse/session.h"

#include "unit/server/pulse/recorded_session.h"

#include <boost/test/unit_test.hpp>

#include <fstream>
#include <iterator>
#include <string>
#include <vector>

using namespace audiod::pulse;

namespace {

// Takes every command; knows none.
struct Recorder : CommandHandler {
    std::vector<Command> commands;
    bool on_command(Session&, Command command, uint32_t, TagReader&) override {
        commands.push_back(command);
        return false;
    }
    bool on_audio(Session&, const Audio&) override { return false; }
};

// The server's answers: (command, tag, the rest).
struct Answer {
    Command command;
    uint32_t tag;
    std::vector<uint8_t> fields;
};

std::vector<Answer> answers(Session& session) {
    FrameReader reader;
    BOOST_REQUIRE(reader.feed(session.take_output()));
    std::vector<Answer> out;
    while (auto frame = reader.next()) {
        TagReader r(frame->payload);
        uint32_t command = 0;
        uint32_t tag = 0;
        BOOST_REQUIRE(r.get_u32(command) && r.get_u32(tag));
        out.push_back(
            {static_cast<Command>(command), tag,
             std::vector<uint8_t>(frame->payload.end() - static_cast<std::ptrdiff_t>(r.remaining()),
                                  frame->payload.end())});
    }
    return out;
}

std::vector<uint8_t> packet(Command command, uint32_t tag, const TagWriter& fields = {}) {
    return command_packet(command, tag, fields);
}

} // namespace

BOOST_AUTO_TEST_SUITE(pulse_session)

BOOST_AUTO_TEST_CASE(pactl_is_greeted_and_its_first_command_reaches_the_handler) {
    Recorder handler;
    Session session(7, handler);
    BOOST_REQUIRE_MESSAGE(session.receive(audiod::test::recorded_session("pactl_info")),
                          session.error());
    BOOST_CHECK_EQUAL(session.version(), kVersion);
    BOOST_CHECK(session.named());
    BOOST_CHECK_EQUAL(
        property_string(session.client_properties(), "application.process.binary").value_or(""),
        "pactl");
    // pactl info asks for the server's facts next.
    BOOST_REQUIRE(!handler.commands.empty());
    BOOST_CHECK(handler.commands.front() == Command::get_server_info);

    const auto got = answers(session);
    BOOST_REQUIRE_GE(got.size(), 3u);
    // AUTH: our version, shared memory declined (no flag bits).
    BOOST_CHECK(got[0].command == Command::reply);
    TagReader version(got[0].fields);
    uint32_t word = 0;
    BOOST_REQUIRE(version.get_u32(word) && version.done());
    BOOST_CHECK_EQUAL(word, kVersion);
    // SET_CLIENT_NAME: the client's index.
    BOOST_CHECK(got[1].command == Command::reply);
    TagReader index(got[1].fields);
    uint32_t client = 0;
    BOOST_REQUIRE(index.get_u32(client) && index.done());
    BOOST_CHECK_EQUAL(client, 7u);
    // A command the handler does not take: ERROR(command), and the
    // connection stays.
    BOOST_CHECK(got[2].command == Command::error);
    TagReader code(got[2].fields);
    uint32_t error = 0;
    BOOST_REQUIRE(code.get_u32(error));
    BOOST_CHECK(static_cast<Error>(error) == Error::command);
    BOOST_CHECK(session.error().empty());
}

BOOST_AUTO_TEST_CASE(every_recorded_client_gets_through_the_handshake) {
    for (const char* name : {"pactl_info", "pactl_subscribe", "paplay", "parec_monitor",
                             "pacat_20ms", "pactl_load_module", "pactl_set_sink_volume"}) {
        BOOST_TEST_CONTEXT(name) {
            Recorder handler;
            Session session(1, handler);
            session.receive(
                audiod::test::recorded_session(name)); // audio for no stream may end it later
            BOOST_CHECK(session.named());
            BOOST_CHECK(!handler.commands.empty());
        }
    }
}

BOOST_AUTO_TEST_CASE(what_breaks_the_handshake_ends_the_connection) {
    const auto ends = [](const std::vector<uint8_t>& bytes) {
        Recorder handler;
        Session session(1, handler);
        return !session.receive(bytes) && !session.error().empty();
    };
    const std::vector<uint8_t> cookie(kCookieLength, 0);
    TagWriter auth;
    auth.put_u32(kVersion).put_arbitrary(cookie);
    TagWriter old_auth;
    old_auth.put_u32(12).put_arbitrary(cookie);
    BOOST_CHECK(ends(packet(Command::get_server_info, 1)));                     // before AUTH
    BOOST_CHECK(ends(packet(Command::auth, 1, old_auth)));                      // too old
    BOOST_CHECK(ends(packet(Command::auth, 1, TagWriter().put_u32(kVersion)))); // no cookie
    std::vector<uint8_t> twice = packet(Command::auth, 1, auth);
    const std::vector<uint8_t> again = packet(Command::auth, 2, auth);
    twice.insert(twice.end(), again.begin(), again.end());
    BOOST_CHECK(ends(twice));
    std::vector<uint8_t> unnamed = packet(Command::auth, 1, auth);
    const std::vector<uint8_t> info = packet(Command::get_server_info, 2);
    unnamed.insert(unnamed.end(), info.begin(), info.end());
    BOOST_CHECK(ends(unnamed)); // a command before SET_CLIENT_NAME
    std::vector<uint8_t> audio = packet(Command::auth, 1, auth);
    const auto header = frame_header(4, 0);
    audio.insert(audio.end(), header.begin(), header.end());
    audio.insert(audio.end(), {1, 2, 3, 4});
    BOOST_CHECK(ends(audio)); // audio before the handshake
}

BOOST_AUTO_TEST_CASE(a_client_newer_than_us_is_written_to_by_our_version) {
    Recorder handler;
    Session session(1, handler);
    TagWriter auth;
    auth.put_u32(99 | kShmFlag | kMemfdFlag).put_arbitrary(std::vector<uint8_t>(kCookieLength));
    BOOST_REQUIRE(session.receive(packet(Command::auth, 5, auth)));
    BOOST_CHECK_EQUAL(session.version(), kVersion);
    const auto got = answers(session);
    BOOST_REQUIRE_EQUAL(got.size(), 1u);
    BOOST_CHECK_EQUAL(got[0].tag, 5u);
}

BOOST_AUTO_TEST_SUITE_END()
