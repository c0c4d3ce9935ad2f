// Following ptp4l: the management GETs are what `pmc` sends, the answers
// are read as ptp4l 3.1.1 (Debian 12) writes them (bytes taken from a
// free-running slave here, 3 ms off by its delayAsymmetry), anything else
// is refused; and the follower, against a ptp4l of the test's making on a
// Unix socket, takes the offset, smooths it, steps at once, and holds
// the last one when ptp4l goes away.
#include "monotonic_time.h"
#include "ptp_follower.h"
#include "ptp_management.h"
#include "ptp_offset_filter.h"

#include <boost/test/unit_test.hpp>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <string>
#include <sys/socket.h>
#include <sys/un.h>
#include <thread>
#include <unistd.h>
#include <vector>

using namespace audiod::rtp;

namespace {

// ptp4l's answers to pmc's `GET TIME_STATUS_NP` and `GET
// TIME_PROPERTIES_DATA_SET`: a slave 3,005,492 ns behind grandmaster
// 8adc88.fffe.3fe3cd, which counts arbitrary time, UTC offset 37 s.
const std::vector<uint8_t> kTimeStatus = {
    0x0d, 0x02, 0x00, 0x68, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
    0x00, 0x00, 0x00, 0x00, 0x00, 0x76, 0x1f, 0x9c, 0xff, 0xfe, 0x7a, 0x78, 0x12, 0x00, 0x00,
    0x00, 0x00, 0x04, 0x7f, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x6f, 0xb1, 0x00,
    0x00, 0x02, 0x00, 0x00, 0x01, 0x00, 0x34, 0xc0, 0x00, 0xff, 0xff, 0xff, 0xff, 0xff, 0xd2,
    0x23, 0xcc, 0x18, 0xee, 0xbc, 0x5a, 0x3c, 0x5a, 0x1a, 0x41, 0x00, 0x00, 0x00, 0x00, 0x00,
    0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
    0x00, 0x00, 0x00, 0x00, 0x00, 0x01, 0x8a, 0xdc, 0x88, 0xff, 0xfe, 0x3f, 0xe3, 0xcd};
const std::vector<uint8_t> kTimeProperties = {
    0x0d, 0x02, 0x00, 0x3a, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
    0x00, 0x00, 0x00, 0x00, 0x00, 0x76, 0x1f, 0x9c, 0xff, 0xfe, 0x7a, 0x78, 0x12, 0x00, 0x00,
    0x00, 0x01, 0x04, 0x7f, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x6f, 0x10, 0x00,
    0x00, 0x02, 0x00, 0x00, 0x01, 0x00, 0x06, 0x20, 0x03, 0x00, 0x25, 0x00, 0xa0};

// An answer of the kind ptp4l writes: TIME_STATUS_NP to `sequence` with
// `offset_ns`, a foreign grandmaster present.
std::vector<uint8_t> time_status(uint16_t sequence, int64_t offset_ns) {
    std::vector<uint8_t> m = kTimeStatus;
    m[30] = static_cast<uint8_t>(sequence >> 8);
    m[31] = static_cast<uint8_t>(sequence);
    for (int i = 0; i < 8; ++i) {
        m[54 + i] = static_cast<uint8_t>(static_cast<uint64_t>(offset_ns) >> (56 - 8 * i));
    }
    return m;
}

std::vector<uint8_t> time_properties(uint16_t sequence, bool ptp_timescale) {
    std::vector<uint8_t> m = kTimeProperties;
    m[30] = static_cast<uint8_t>(sequence >> 8);
    m[31] = static_cast<uint8_t>(sequence);
    m[56] = ptp_timescale ? 0x0c : 0x00; // PTP timescale, UTC offset valid
    return m;
}

// A ptp4l of the test's own: answers each GET on a Unix datagram socket
// with the offset it is told, until told to go. It answers from the moment
// it is made, so its first offset is given then: set after, the follower
// could already have taken 0 (it asks every few milliseconds).
class FakePtp4l {
public:
    FakePtp4l(std::string path, int64_t first_offset_ns)
        : offset_ns(first_offset_ns)
        , path_(std::move(path)) {
        fd_ = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
        sockaddr_un a{};
        a.sun_family = AF_UNIX;
        std::strncpy(a.sun_path, path_.c_str(), sizeof a.sun_path - 1);
        unlink(path_.c_str());
        BOOST_REQUIRE(bind(fd_, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0);
        timeval wait{0, 50'000};
        setsockopt(fd_, SOL_SOCKET, SO_RCVTIMEO, &wait, sizeof wait);
        thread_ = std::thread([this] { serve(); });
    }
    ~FakePtp4l() { go(); }
    void go() {
        if (thread_.joinable()) {
            stop_ = true;
            thread_.join();
            close(fd_);
            unlink(path_.c_str());
        }
    }
    std::atomic<int64_t> offset_ns{0};
    std::atomic<bool> ptp_timescale{false};
    std::atomic<int> questions{0};

private:
    void serve() {
        while (!stop_) {
            uint8_t in[256];
            sockaddr_un from{};
            socklen_t length = sizeof from;
            const ssize_t n =
                recvfrom(fd_, in, sizeof in, 0, reinterpret_cast<sockaddr*>(&from), &length);
            if (n != static_cast<ssize_t>(kPtpManagementRequestSize)) {
                continue;
            }
            ++questions;
            const auto sequence = static_cast<uint16_t>(in[30] << 8 | in[31]);
            const auto id = static_cast<uint16_t>(in[52] << 8 | in[53]);
            const std::vector<uint8_t> out = id == kPtpTimeStatusNp
                                                 ? time_status(sequence, offset_ns.load())
                                                 : time_properties(sequence, ptp_timescale);
            sendto(fd_, out.data(), out.size(), 0, reinterpret_cast<sockaddr*>(&from), length);
        }
    }
    std::string path_;
    int fd_ = -1;
    std::atomic<bool> stop_{false};
    std::thread thread_;
};

// Waits (up to 10 s) until `done`.
template <typename F>
bool wait_until(F done) {
    for (int i = 0; i < 1000; ++i) {
        if (done()) {
            return true;
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    return done();
}

std::string socket_path(const char* name) {
    return "/tmp/audiod-test-ptp-" + std::to_string(getpid()) + "-" + name;
}

} // namespace

BOOST_AUTO_TEST_SUITE(ptp_management)

BOOST_AUTO_TEST_CASE(a_get_is_what_pmc_sends) {
    uint8_t request[kPtpManagementRequestSize];
    write_ptp_get(kPtpTimeStatusNp, 7, 0x12345678, 0, request);
    BOOST_CHECK_EQUAL(request[0], 0x0d); // management
    BOOST_CHECK_EQUAL(request[1], 0x02); // PTPv2
    BOOST_CHECK_EQUAL(request[2] << 8 | request[3], 54);
    BOOST_CHECK_EQUAL(request[30] << 8 | request[31], 7);
    BOOST_CHECK_EQUAL(request[32], 0x04);
    BOOST_CHECK_EQUAL(request[33], 0x7f);
    for (int i = 34; i < 44; ++i) {
        BOOST_CHECK_EQUAL(request[i], 0xff); // every clock, every port
    }
    BOOST_CHECK_EQUAL(request[46], 0); // GET
    const uint8_t tlv[] = {0x00, 0x01, 0x00, 0x02, 0xc0, 0x00};
    BOOST_CHECK_EQUAL_COLLECTIONS(request + 48, request + 54, tlv, tlv + 6);
}

BOOST_AUTO_TEST_CASE(ptp4l_answers_are_read) {
    PtpAnswer a;
    BOOST_REQUIRE(parse_ptp_answer(kTimeStatus, a));
    BOOST_CHECK_EQUAL(a.id, kPtpTimeStatusNp);
    BOOST_CHECK_EQUAL(a.sequence, 0);
    BOOST_CHECK_EQUAL(a.master_offset_ns, -3'005'492);
    BOOST_CHECK(a.grandmaster_present);
    BOOST_CHECK_EQUAL(a.grandmaster, 0x8adc88fffe3fe3cdULL);
    PtpAnswer p;
    BOOST_REQUIRE(parse_ptp_answer(kTimeProperties, p));
    BOOST_CHECK_EQUAL(p.id, kPtpTimePropertiesDataSet);
    BOOST_CHECK_EQUAL(p.sequence, 1);
    BOOST_CHECK_EQUAL(p.utc_offset_s, 37);
    BOOST_CHECK(!p.ptp_timescale);
    BOOST_CHECK(!p.utc_offset_valid);
    BOOST_REQUIRE(parse_ptp_answer(time_properties(2, true), p));
    BOOST_CHECK(p.ptp_timescale);
    BOOST_CHECK(p.utc_offset_valid);
}

BOOST_AUTO_TEST_CASE(anything_else_is_refused) {
    PtpAnswer a;
    // Every truncation.
    for (size_t n = 0; n < kTimeStatus.size(); ++n) {
        BOOST_CHECK(!parse_ptp_answer({kTimeStatus.data(), n}, a));
    }
    auto changed = [](size_t at, uint8_t value) {
        std::vector<uint8_t> m = kTimeStatus;
        m[at] = value;
        return m;
    };
    BOOST_CHECK(!parse_ptp_answer(changed(0, 0x00), a));  // a Sync, not management
    BOOST_CHECK(!parse_ptp_answer(changed(1, 0x01), a));  // PTPv1
    BOOST_CHECK(!parse_ptp_answer(changed(46, 0x00), a)); // a GET, not a RESPONSE
    BOOST_CHECK(!parse_ptp_answer(changed(49, 0x02), a)); // an error status
    BOOST_CHECK(!parse_ptp_answer(changed(51, 0x10), a)); // too short for TIME_STATUS_NP
    BOOST_CHECK(!parse_ptp_answer(changed(51, 0xff), a)); // longer than the message
    BOOST_CHECK(!parse_ptp_answer(changed(53, 0x01), a)); // another id
    BOOST_CHECK(!parse_ptp_answer(changed(3, 0xff), a));  // longer than what came
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_AUTO_TEST_SUITE(ptp_follower)

BOOST_AUTO_TEST_CASE(the_offset_is_followed_smoothed_stepped_and_held) {
    const std::string path = socket_path("follow");
    FakePtp4l ptp4l(path, 3'000'000);
    std::string error;
    auto follower = PtpFollower::start(path, error);
    BOOST_REQUIRE_MESSAGE(follower != nullptr, error);
    // The first measure is taken whole.
    BOOST_REQUIRE(wait_until([&] { return follower->answering(); }));
    BOOST_CHECK_EQUAL(follower->wall_ahead_ns(), 3'000'000);
    BOOST_CHECK_EQUAL(follower->timescale_minus_utc_ns(), 0);
    BOOST_CHECK(follower->describe().find("ptp4l-state=following\nptp4l-grandmaster=8adc88.fffe."
                                          "3fe3cd\nptp4l-offset-ns=3000000\n") !=
                std::string::npos);
    // 400 µs more: a quarter of it at each answer.
    ptp4l.offset_ns = 3'400'000;
    BOOST_REQUIRE(wait_until([&] { return follower->wall_ahead_ns() != 3'000'000; }));
    BOOST_CHECK_EQUAL(follower->wall_ahead_ns(), 3'100'000);
    BOOST_REQUIRE(wait_until([&] { return follower->wall_ahead_ns() > 3'290'000; }));
    // A step of over a millisecond (a new grandmaster): at once. A
    // grandmaster counting PTP time adds its UTC offset.
    ptp4l.ptp_timescale = true;
    ptp4l.offset_ns = -2'000'000;
    BOOST_REQUIRE(wait_until([&] { return follower->wall_ahead_ns() < 0; }));
    BOOST_CHECK_EQUAL(follower->wall_ahead_ns(), -2'000'000);
    BOOST_REQUIRE(wait_until([&] { return follower->timescale_minus_utc_ns() != 0; }));
    BOOST_CHECK_EQUAL(follower->timescale_minus_utc_ns(), int64_t{37} * 1'000'000'000);
    // ptp4l gone: the last offset holds, and the state says so.
    ptp4l.go();
    BOOST_REQUIRE(wait_until([&] { return !follower->answering(); }));
    BOOST_CHECK_EQUAL(follower->wall_ahead_ns(), -2'000'000);
    BOOST_CHECK(follower->describe().find("ptp4l-state=unreachable-holding") != std::string::npos);
}

BOOST_AUTO_TEST_CASE(a_ptp4l_not_yet_there_is_asked_again) {
    const std::string path = socket_path("later");
    std::string error;
    auto follower = PtpFollower::start(path, error);
    BOOST_REQUIRE_MESSAGE(follower != nullptr, error);
    BOOST_CHECK(!follower->answering());
    BOOST_CHECK(follower->describe().find("ptp4l-state=unreachable\n") != std::string::npos);
    BOOST_CHECK_EQUAL(follower->wall_ahead_ns(), 0);
    FakePtp4l ptp4l(path, 50'000);
    BOOST_REQUIRE(wait_until([&] { return follower->answering(); }));
    BOOST_CHECK_EQUAL(follower->wall_ahead_ns(), 50'000);
}

BOOST_AUTO_TEST_CASE(a_path_no_socket_can_have_is_refused) {
    std::string error;
    BOOST_CHECK(PtpFollower::start(std::string(200, 'x'), error) == nullptr);
    BOOST_CHECK_MESSAGE(error.find("cannot be a socket's path") != std::string::npos, error);
    error.clear();
    BOOST_CHECK(PtpFollower::start("", error) == nullptr);
    BOOST_CHECK(!error.empty());
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_AUTO_TEST_SUITE(ptp_offset_filter)

BOOST_AUTO_TEST_CASE(near_measures_are_followed_a_quarter_of_the_way) {
    PtpOffsetFilter filter;
    BOOST_CHECK_EQUAL(filter.take(2'000'000), 2'000'000); // the first, whole
    BOOST_CHECK_EQUAL(filter.take(2'040'000), 2'010'000);
    BOOST_CHECK_EQUAL(filter.take(1'970'000), 2'000'000);
    BOOST_CHECK_EQUAL(filter.outliers(), 0U);
}

BOOST_AUTO_TEST_CASE(a_lone_outlier_is_dropped) {
    PtpOffsetFilter filter;
    filter.take(2'000'000);
    BOOST_CHECK_EQUAL(filter.take(2'600'000), 2'000'000); // held back
    BOOST_CHECK_EQUAL(filter.take(2'004'000), 2'001'000); // the next disagrees
    BOOST_CHECK_EQUAL(filter.outliers(), 1U);
    // Far, then far the other way: neither confirms the other.
    BOOST_CHECK_EQUAL(filter.take(4'000'000), 2'001'000);
    BOOST_CHECK_EQUAL(filter.take(-1'000'000), 2'001'000);
    BOOST_CHECK_EQUAL(filter.take(2'001'000), 2'001'000);
    BOOST_CHECK_EQUAL(filter.outliers(), 3U);
}

BOOST_AUTO_TEST_CASE(a_confirmed_change_is_followed_and_a_confirmed_step_taken_at_once) {
    PtpOffsetFilter filter;
    filter.take(3'000'000);
    BOOST_CHECK_EQUAL(filter.take(3'400'000), 3'000'000);
    BOOST_CHECK_EQUAL(filter.take(3'420'000), 3'105'000); // a quarter of 420 µs
    // Now within reach: a quarter at each answer.
    BOOST_CHECK_EQUAL(filter.take(3'185'000), 3'125'000);
    // A new grandmaster, 5 ms away: the second answer takes it whole.
    BOOST_CHECK_EQUAL(filter.take(-2'000'000), 3'125'000);
    BOOST_CHECK_EQUAL(filter.take(-2'050'000), -2'050'000);
    BOOST_CHECK_EQUAL(filter.outliers(), 0U);
}

BOOST_AUTO_TEST_SUITE_END()
