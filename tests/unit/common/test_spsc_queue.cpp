// The SPSC queue: semantics on one thread, and a two-thread stress test that
// ThreadSanitizer checks in the sanitizer build.
#include "common/spsc_queue.h"

#include <boost/test/unit_test.hpp>

#include <thread>

using audiod::SpscQueue;

BOOST_AUTO_TEST_SUITE(spsc_queue)

BOOST_AUTO_TEST_CASE(fifo_full_and_empty) {
    SpscQueue<int> q(3); // rounds up to 4
    BOOST_CHECK_EQUAL(q.capacity(), 4u);
    int out = 0;
    BOOST_CHECK(!q.try_pop(out));
    for (int i = 0; i < 4; ++i) {
        BOOST_CHECK(q.try_push(i));
    }
    BOOST_CHECK(!q.try_push(99));
    BOOST_CHECK_EQUAL(q.size_approx(), 4u);
    for (int i = 0; i < 4; ++i) {
        BOOST_REQUIRE(q.try_pop(out));
        BOOST_CHECK_EQUAL(out, i);
    }
    BOOST_CHECK(!q.try_pop(out));
}

BOOST_AUTO_TEST_CASE(bulk_operations_wrap) {
    SpscQueue<uint8_t> q(8);
    uint8_t in[6] = {1, 2, 3, 4, 5, 6};
    uint8_t out[8] = {};
    BOOST_CHECK_EQUAL(q.try_push_n(in, 6), 6u);
    BOOST_CHECK_EQUAL(q.try_pop_n(out, 4), 4u);
    BOOST_CHECK_EQUAL(q.try_push_n(in, 6), 6u); // wraps
    BOOST_CHECK_EQUAL(q.try_push_n(in, 6), 0u); // full
    BOOST_CHECK_EQUAL(q.try_pop_n(out, 8), 8u);
    const uint8_t expected[8] = {5, 6, 1, 2, 3, 4, 5, 6};
    BOOST_CHECK(std::equal(out, out + 8, expected));
}

BOOST_AUTO_TEST_CASE(two_threads_lose_nothing) {
    SpscQueue<uint64_t> q(64);
    constexpr uint64_t kCount = 2'000'000;
    std::thread producer([&] {
        uint64_t next = 0;
        uint64_t batch[7];
        while (next < kCount) {
            size_t n = 0;
            while (n < 7 && next + n < kCount) {
                batch[n] = next + n;
                ++n;
            }
            next += q.try_push_n(batch, n);
        }
    });
    uint64_t expected = 0;
    uint64_t buffer[5];
    bool in_order = true;
    while (expected < kCount) {
        const size_t n = q.try_pop_n(buffer, 5);
        for (size_t i = 0; i < n; ++i) {
            in_order = in_order && buffer[i] == expected;
            ++expected;
        }
    }
    producer.join();
    BOOST_CHECK(in_order);
    BOOST_CHECK_EQUAL(expected, kCount);
}

BOOST_AUTO_TEST_SUITE_END()
