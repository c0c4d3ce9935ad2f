// Audio in a client's memfd pool (pulse/shared_memory.h), and the session
// that agrees on it at AUTH, takes the pool and releases each block
// (pulse/session.h): with real memfds, as libpulse makes them.
#include "pulse/session.h"
#include "pulse/shared_memory.h"

#include <boost/test/unit_test.hpp>

#include <cstring>
#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

using namespace audiod;
using namespace audiod::pulse;

namespace {

// A pool as libpulse makes one (sealable, never sealed), holding `bytes`.
UniqueFd pool_with(const std::vector<uint8_t>& bytes, unsigned flags = MFD_ALLOW_SEALING) {
    UniqueFd fd(::memfd_create("test-pool", MFD_CLOEXEC | flags));
    BOOST_REQUIRE(fd);
    BOOST_REQUIRE_EQUAL(::write(fd.get(), bytes.data(), bytes.size()),
                        static_cast<ssize_t>(bytes.size()));
    return fd;
}

std::vector<uint8_t> counting(size_t n) {
    std::vector<uint8_t> bytes(n);
    for (size_t i = 0; i < n; ++i) {
        bytes[i] = static_cast<uint8_t>(i);
    }
    return bytes;
}

// Keeps what each audio call brought.
struct Listener : CommandHandler {
    std::vector<std::vector<uint8_t>> audio;
    bool on_command(Session&, Command, uint32_t, TagReader&) override { return false; }
    bool on_audio(Session&, const Audio& a) override {
        audio.emplace_back(a.bytes.begin(), a.bytes.end());
        return a.channel == 0;
    }
};

std::vector<uint8_t> packet(Command command, uint32_t tag, const TagWriter& fields = {}) {
    return command_packet(command, tag, fields);
}

// The first packet the session sent: its command and its first field.
std::pair<Command, uint32_t> first_answer(Session& session) {
    FrameReader reader;
    BOOST_REQUIRE(reader.feed(session.take_output()));
    const auto answer = reader.next();
    BOOST_REQUIRE(answer);
    TagReader r(answer->payload);
    uint32_t command = 0;
    uint32_t tag = 0;
    uint32_t field = 0;
    BOOST_REQUIRE(r.get_u32(command) && r.get_u32(tag) && r.get_u32(field));
    return {static_cast<Command>(command), field};
}

// AUTH with `word` and SET_CLIENT_NAME; returns the AUTH answer's word.
uint32_t handshake(Session& session, uint32_t word) {
    TagWriter auth;
    auth.put_u32(word).put_arbitrary(std::vector<uint8_t>(kCookieLength, 0));
    TagWriter name;
    name.put_proplist({});
    BOOST_REQUIRE(session.receive(packet(Command::auth, 1, auth)));
    BOOST_REQUIRE(session.receive(packet(Command::set_client_name, 2, name)));
    return first_answer(session).second;
}

std::vector<uint8_t> register_pool(uint32_t pool_id) {
    TagWriter w;
    w.put_u32(pool_id);
    return packet(Command::register_memfd_shmid, kNoTag, w);
}

// An audio frame naming a block of a pool.
std::vector<uint8_t> shared_audio(uint32_t channel, SharedBlock block) {
    std::vector<uint8_t> frame;
    const auto header = frame_header(kSharedBlockBytes, channel, 0, kShmData | kShmMemfdBlock);
    frame.assign(header.begin(), header.end());
    for (const uint32_t word : {block.block_id, block.pool_id, block.offset, block.length}) {
        for (int shift = 24; shift >= 0; shift -= 8) {
            frame.push_back(static_cast<uint8_t>(word >> shift));
        }
    }
    return frame;
}

constexpr uint32_t kOffersMemfd = kVersion | kShmFlag | kMemfdFlag;

} // namespace

BOOST_AUTO_TEST_SUITE(pulse_shared_memory)

BOOST_AUTO_TEST_CASE(a_block_reads_back_only_inside_its_pool) {
    const auto bytes = counting(4096);
    SharedPools pools;
    BOOST_REQUIRE_EQUAL(pools.add(7, pool_with(bytes)), "");
    const auto block = pools.bytes({1, 7, 100, 50});
    BOOST_REQUIRE(block);
    BOOST_CHECK(std::equal(block->begin(), block->end(), bytes.begin() + 100));
    BOOST_CHECK(pools.bytes({1, 7, 4000, 96}));
    BOOST_CHECK(!pools.bytes({1, 7, 4000, 97}));      // past its end
    BOOST_CHECK(!pools.bytes({1, 7, 0xffffffff, 2})); // an offset that wraps
    BOOST_CHECK(!pools.bytes({1, 7, 0, 0}));          // nothing
    BOOST_CHECK(!pools.bytes({1, 8, 0, 16}));         // another pool
    BOOST_CHECK(read_shared_block(std::vector<uint8_t>(15)) == std::nullopt);
    const auto read =
        read_shared_block(std::vector<uint8_t>{0, 0, 0, 1, 0, 0, 0, 7, 0, 0, 0, 100, 0, 0, 0, 50});
    BOOST_REQUIRE(read);
    BOOST_CHECK_EQUAL(read->pool_id, 7u);
    BOOST_CHECK_EQUAL(read->offset, 100u);
}

BOOST_AUTO_TEST_CASE(a_pool_taken_cannot_shrink_under_the_server) {
    SharedPools pools;
    UniqueFd fd = pool_with(counting(4096));
    UniqueFd kept(::dup(fd.get()));
    BOOST_REQUIRE_EQUAL(pools.add(1, std::move(fd)), "");
    // The client's own descriptor: growing is its business, shrinking not.
    BOOST_CHECK_NE(::ftruncate(kept.get(), 1024), 0);
    BOOST_CHECK_EQUAL(::ftruncate(kept.get(), 8192), 0);
    BOOST_CHECK(pools.bytes({1, 1, 0, 4096}));
}

BOOST_AUTO_TEST_CASE(pools_that_cannot_be_held_safely_are_refused) {
    SharedPools pools;
    // Not sealable: it could shrink under the mapping.
    BOOST_CHECK_NE(pools.add(1, pool_with(counting(64), 0)), "");
    // Not a memfd at all.
    int ends[2];
    BOOST_REQUIRE_EQUAL(::pipe(ends), 0);
    ::close(ends[1]);
    BOOST_CHECK_NE(pools.add(2, UniqueFd(ends[0])), "");
    // Empty.
    BOOST_CHECK_NE(pools.add(3, pool_with({})), "");
    // An id twice, and more pools than a client may have.
    BOOST_REQUIRE_EQUAL(pools.add(4, pool_with(counting(64))), "");
    BOOST_CHECK_NE(pools.add(4, pool_with(counting(64))), "");
    for (uint32_t id = 5; pools.size() < SharedPools::kMaxPools; ++id) {
        BOOST_REQUIRE_EQUAL(pools.add(id, pool_with(counting(64))), "");
    }
    BOOST_CHECK_EQUAL(pools.add(100, pool_with(counting(64))), "more than 16 memory pools");
}

BOOST_AUTO_TEST_CASE(memfd_pools_are_agreed_with_a_client_of_our_uid_from_version_32) {
    Listener handler;
    Session ours(1, handler, true);
    BOOST_CHECK_EQUAL(handshake(ours, kOffersMemfd), kOffersMemfd);
    BOOST_CHECK(ours.shares_memory());
    // Another uid's client, one that offers POSIX memory only, an old one.
    Session theirs(2, handler, false);
    BOOST_CHECK_EQUAL(handshake(theirs, kOffersMemfd), kVersion);
    Session posix_only(3, handler, true);
    BOOST_CHECK_EQUAL(handshake(posix_only, kVersion | kShmFlag), kVersion);
    Session old(4, handler, true);
    BOOST_CHECK_EQUAL(handshake(old, 31 | kShmFlag | kMemfdFlag), kVersion);
    BOOST_CHECK(!old.shares_memory());
    // Where it was not agreed, a frame in shared memory ends the connection.
    BOOST_CHECK(!theirs.receive(shared_audio(0, {1, 1, 0, 16})));
}

BOOST_AUTO_TEST_CASE(a_client_that_must_bring_the_cookie_is_refused_without_it) {
    Listener handler;
    const std::vector<uint8_t> cookie(kCookieLength, 7);
    Session good(1, handler);
    good.require_cookie(cookie);
    TagWriter auth;
    auth.put_u32(kVersion).put_arbitrary(cookie);
    BOOST_CHECK(good.receive(packet(Command::auth, 1, auth)));
    BOOST_CHECK(good.authorized());
    Session bad(2, handler);
    bad.require_cookie(cookie);
    TagWriter wrong;
    wrong.put_u32(kVersion).put_arbitrary(std::vector<uint8_t>(kCookieLength, 8));
    BOOST_CHECK(!bad.receive(packet(Command::auth, 1, wrong)));
    BOOST_CHECK_EQUAL(bad.error(), "a wrong cookie");
    const auto [command, error] = first_answer(bad);
    BOOST_CHECK(command == Command::error);
    BOOST_CHECK(static_cast<Error>(error) == Error::access);
}

BOOST_AUTO_TEST_CASE(audio_by_reference_is_handed_over_and_its_block_released) {
    Listener handler;
    Session session(1, handler, true);
    BOOST_REQUIRE_EQUAL(handshake(session, kOffersMemfd), kOffersMemfd);
    const auto bytes = counting(1024);
    std::vector<UniqueFd> fds;
    fds.push_back(pool_with(bytes));
    BOOST_REQUIRE_MESSAGE(session.receive(register_pool(42), std::move(fds)), session.error());
    BOOST_CHECK_EQUAL(session.shared_pools(), 1u);
    BOOST_REQUIRE_MESSAGE(session.receive(shared_audio(0, {9, 42, 256, 128})), session.error());
    BOOST_REQUIRE_EQUAL(handler.audio.size(), 1u);
    BOOST_CHECK(std::equal(handler.audio[0].begin(), handler.audio[0].end(), bytes.begin() + 256));
    // The release: a header alone, with the block's id and the flag.
    const std::vector<uint8_t> out = session.take_output();
    const auto release = frame_release(9);
    BOOST_REQUIRE_EQUAL(out.size(), release.size());
    BOOST_CHECK(std::equal(out.begin(), out.end(), release.begin()));
    BOOST_CHECK_EQUAL(release[8 + 3], 9u); // offset high word: the block id
    BOOST_CHECK_EQUAL(release[16], 0x40u); // SHMRELEASE
    // A block outside every pool ends the connection.
    BOOST_CHECK(!session.receive(shared_audio(0, {10, 42, 1000, 128})));
    BOOST_CHECK_EQUAL(session.error(), "audio in shared memory outside the pools it registered");
}

BOOST_AUTO_TEST_CASE(a_pool_registered_without_its_memfd_ends_the_connection) {
    Listener handler;
    Session session(1, handler, true);
    BOOST_REQUIRE_EQUAL(handshake(session, kOffersMemfd), kOffersMemfd);
    BOOST_CHECK(!session.receive(register_pool(1)));
    BOOST_CHECK_EQUAL(session.error(), "REGISTER_MEMFD_SHMID without its memfd");
    // Descriptors nobody asked for are not hoarded.
    Session hoarder(2, handler, true);
    BOOST_REQUIRE_EQUAL(handshake(hoarder, kOffersMemfd), kOffersMemfd);
    std::vector<UniqueFd> fds;
    for (size_t i = 0; i <= Session::kMaxPendingFds; ++i) {
        fds.push_back(pool_with(counting(64)));
    }
    BOOST_CHECK(!hoarder.receive({}, std::move(fds)));
}

BOOST_AUTO_TEST_CASE(shared_memory_frames_are_only_audio_by_reference) {
    FrameReader plain;
    BOOST_CHECK(!plain.feed(shared_audio(0, {1, 1, 0, 16})));
    const auto refused = [](uint32_t channel, uint32_t length, uint32_t flags) {
        FrameReader reader;
        reader.allow_shared_memory();
        const auto header = frame_header(length, channel, 0, flags);
        std::vector<uint8_t> bytes(header.begin(), header.end());
        bytes.resize(bytes.size() + length);
        return !reader.feed(bytes);
    };
    BOOST_CHECK(!refused(0, 16, kShmData));
    BOOST_CHECK(!refused(0, 16, kShmData | kShmMemfdBlock | 0x00800000u | 1)); // writable, seek
    BOOST_CHECK(refused(0, 17, kShmData));                                     // not a reference
    BOOST_CHECK(refused(kControlChannel, 16, kShmData));                       // a packet
    BOOST_CHECK(refused(0, 16, kShmData | kShmRelease));                       // a revoke
    BOOST_CHECK(refused(0, 16, kShmRelease)); // a release: we lent nothing
}

BOOST_AUTO_TEST_SUITE_END()
