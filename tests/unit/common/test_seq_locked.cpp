// A value published by one thread and read whole by another
// (common/seq_locked.h): a reader never sees half of one publication and
// half of another, however the two threads meet.
#include "common/seq_locked.h"

#include <boost/test/unit_test.hpp>

#include <atomic>
#include <thread>

namespace {

struct Pair {
    uint64_t a = 0;
    int64_t b = 0;
    double c = 0;
};

} // namespace

BOOST_AUTO_TEST_SUITE(seq_locked)

BOOST_AUTO_TEST_CASE(reads_are_always_one_publication_whole) {
    audiod::SeqLocked<Pair> value;
    BOOST_CHECK_EQUAL(value.read().a, 0u);
    std::atomic<bool> done{false};
    std::thread writer([&] {
        for (uint64_t i = 1; i <= 200'000; ++i) {
            value.publish({i, -static_cast<int64_t>(i), static_cast<double>(i) / 2});
        }
        done = true;
    });
    uint64_t torn = 0, reads = 0, last = 0;
    bool backwards = false;
    while (!done) {
        const Pair p = value.read();
        ++reads;
        if (p.b != -static_cast<int64_t>(p.a) || p.c != static_cast<double>(p.a) / 2) {
            ++torn;
        }
        backwards = backwards || p.a < last;
        last = p.a;
    }
    writer.join();
    BOOST_CHECK_EQUAL(torn, 0u);
    BOOST_CHECK(!backwards);
    BOOST_CHECK_GT(reads, 0u);
    BOOST_CHECK_EQUAL(value.read().a, 200'000u);
}

// A reader that must not wait (the RT thread reading the control
// thread's value) tries once: it gets one publication whole, or nothing,
// and keeps what it had.
BOOST_AUTO_TEST_CASE(a_try_reads_one_publication_whole_or_nothing) {
    audiod::SeqLocked<Pair> value;
    Pair p{7, -7, 3.5};
    BOOST_REQUIRE(value.try_read(p));
    BOOST_CHECK_EQUAL(p.a, 0u); // T{} before the first publication
    std::atomic<bool> done{false};
    std::thread writer([&] {
        for (uint64_t i = 1; i <= 200'000; ++i) {
            value.publish({i, -static_cast<int64_t>(i), static_cast<double>(i) / 2});
        }
        done = true;
    });
    uint64_t torn = 0, got = 0;
    while (!done) {
        Pair q{};
        if (value.try_read(q)) {
            ++got;
            torn += q.b != -static_cast<int64_t>(q.a) || q.c != static_cast<double>(q.a) / 2;
        }
    }
    writer.join();
    BOOST_CHECK_EQUAL(torn, 0u);
    BOOST_CHECK_GT(got, 0u);
    BOOST_REQUIRE(value.try_read(p));
    BOOST_CHECK_EQUAL(p.a, 200'000u);
}

BOOST_AUTO_TEST_SUITE_END()
