// A direct media clock (RFC 7273, AES67): the RTP time counts the
// reference clock, and a receiver reads the reference time back from it,
// across the 32-bit wrap, to within half a sample.
#include "media_clock.h"

#include <boost/test/unit_test.hpp>

#include <cstdint>

using namespace audiod::rtp;

BOOST_AUTO_TEST_SUITE(media_clock)

BOOST_AUTO_TEST_CASE(rtp_time_counts_the_reference_clock_in_samples) {
    BOOST_CHECK_EQUAL(media_clock_at(0, 48000, 0), 0u);
    BOOST_CHECK_EQUAL(media_clock_at(1'000'000'000, 48000, 0), 48000u);
    BOOST_CHECK_EQUAL(media_clock_at(1'000'000'000, 48000, 5), 48005u);
    // 20.833 µs a sample: 10 µs rounds down, 11 µs up.
    BOOST_CHECK_EQUAL(media_clock_at(10'000, 48000, 0), 0u);
    BOOST_CHECK_EQUAL(media_clock_at(11'000, 48000, 0), 1u);
    // 2026: about 1.8e9 s, far past the first wrap; counted modulo 2^32.
    const int64_t now = int64_t{1'796'000'000} * 1'000'000'000 + 123'456'789;
    const uint64_t samples = uint64_t{1'796'000'000} * 48000 + 5926; // 123.456789 ms
    BOOST_CHECK_EQUAL(media_clock_at(now, 48000, 0), static_cast<uint32_t>(samples));
}

BOOST_AUTO_TEST_CASE(the_reference_time_is_read_back_nearest_the_receivers_own) {
    const int64_t taken = int64_t{1'796'000'000} * 1'000'000'000 + 500'000'000;
    for (const uint32_t rate : {44100u, 48000u, 96000u}) {
        for (const uint32_t offset : {0u, 1234567u, 4294967295u}) {
            const uint32_t rtp = media_clock_at(taken, rate, offset);
            // Read back by a receiver 150 ms later, or a clock a second off.
            for (const int64_t later : {150'000'000LL, -1'000'000'000LL, 40'000'000'000LL}) {
                const int64_t back = media_clock_time(rtp, rate, offset, taken + later);
                BOOST_CHECK_LE(std::llabs(back - taken), 1e9 / rate / 2 + 1);
            }
        }
    }
    // Half a wrap away is the other reading: the receiver's clock must be
    // within half a day (at 48 kHz) of the sender's.
    const uint32_t rtp = media_clock_at(taken, 48000, 0);
    const int64_t day = int64_t{1} << 32;
    const int64_t far = media_clock_time(rtp, 48000, 0, taken + day * 1'000'000'000 / 48000);
    BOOST_CHECK_LE(std::llabs(far - (taken + day * 1'000'000'000 / 48000)),
                   day * 1'000'000'000 / 48000 / 2);
}

BOOST_AUTO_TEST_SUITE_END()
