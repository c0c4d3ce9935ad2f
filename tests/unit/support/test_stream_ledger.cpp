// The soak's ledger: what of each numbered stream arrived at the sinks.
#include "support/numbered_frames.h"
#include "support/stream_ledger.h"

#include <boost/test/unit_test.hpp>

#include <cmath>
#include <vector>

using namespace audiod::test;

namespace {

// Frames FIRST..FIRST+COUNT-1 of STREAM, at GAIN.
std::vector<int16_t> numbered(uint32_t stream, uint64_t first, uint64_t count, double gain = 1) {
    std::vector<int16_t> out;
    for (uint64_t f = first; f < first + count; ++f) {
        int16_t left = 0, right = 0;
        numbered_frame(stream, f, left, right);
        out.push_back(static_cast<int16_t>(std::lround(left * gain)));
        out.push_back(static_cast<int16_t>(std::lround(right * gain)));
    }
    return out;
}

std::vector<int16_t> silence(uint64_t count) {
    return std::vector<int16_t>(2 * count, 0);
}

struct Sink {
    explicit Sink(const char* name, LatestNumbers& latest)
        : ledger(name, latest) {}
    void feed(const std::vector<int16_t>& frames, double at_s) {
        ledger.feed(frames.data(), frames.size() / 2, at_s);
    }
    SinkLedger ledger;
};

} // namespace

BOOST_AUTO_TEST_SUITE(stream_ledger)

BOOST_AUTO_TEST_CASE(frames_read_back_and_a_wrong_gain_fails_the_check) {
    for (const uint32_t stream : {1U, 31U, kMaxNumberedStream}) {
        for (const uint64_t f :
             {uint64_t{0}, uint64_t{65535}, uint64_t{65536}, kNumberedWrap - 1}) {
            int16_t left = 0, right = 0;
            numbered_frame(stream, f, left, right);
            BOOST_CHECK_GT(right, 0); // never silence, never negative
            const auto read = read_numbered(left, right);
            BOOST_REQUIRE(read);
            BOOST_CHECK_EQUAL(read->stream, stream);
            BOOST_CHECK_EQUAL(read->wrapped, f);
        }
    }
    BOOST_CHECK(!read_numbered(0, 0));
    // At other gains some frames pass their check (an eighth at half
    // gain), but never enough in a row with consecutive numbers to be
    // taken for a run.
    for (const double gain : {0.5, 0.7, 0.8, 0.9, 0.99, 0.999, 1.01}) {
        LatestNumbers latest{};
        SinkLedger ledger("a", latest);
        const auto scaled = numbered(5, 1000, 48000, gain);
        ledger.feed(scaled.data(), scaled.size() / 2, 1);
        ledger.finish();
        BOOST_CHECK_MESSAGE(ledger.runs().empty(), "gain " << gain);
        BOOST_CHECK_EQUAL(ledger.stray_frames(), 48000U);
    }
    BOOST_CHECK_EQUAL(unwrap_numbered(5, kNumberedWrap * 3 - 10), kNumberedWrap * 3 + 5);
    BOOST_CHECK_EQUAL(unwrap_numbered(kNumberedWrap - 5, kNumberedWrap * 3 + 10),
                      kNumberedWrap * 3 - 5);
    BOOST_CHECK_EQUAL(unwrap_numbered(7, 2), 7U);
}

BOOST_AUTO_TEST_CASE(a_stream_moved_between_sinks_tiles_its_numbers) {
    LatestNumbers latest{};
    Sink a("a", latest), b("b", latest);
    a.feed(numbered(3, 0, 1000), 1);
    a.feed(silence(300), 2); // an underrun: nothing lost
    a.feed(numbered(3, 1000, 500), 3);
    b.feed(numbered(3, 1500, 2000), 4); // moved: the next number, elsewhere
    a.ledger.finish();
    b.ledger.finish();
    std::vector<Run> runs = a.ledger.runs();
    runs.insert(runs.end(), b.ledger.runs().begin(), b.ledger.runs().end());
    const Verdict v = judge(runs, {}, 1);
    BOOST_CHECK_EQUAL(v.frames_checked, 3500U);
    BOOST_CHECK_EQUAL(v.hand_overs, 1U);
    BOOST_CHECK(v.gaps.empty());
    BOOST_CHECK(v.overlaps.empty());
}

BOOST_AUTO_TEST_CASE(frames_at_another_gain_are_counted_not_lost) {
    LatestNumbers latest{};
    Sink a("a", latest);
    a.feed(numbered(2, 0, 1000), 1);
    a.feed(numbered(2, 1000, 240, 0.998), 1.1); // a ramp
    a.feed(numbered(2, 1240, 4800, 0.5), 1.2);  // half the level
    a.feed(numbered(2, 6040, 1000), 2);
    a.ledger.finish();
    const Verdict v = judge(a.ledger.runs(), {}, 1);
    BOOST_CHECK_EQUAL(a.ledger.runs().size(), 1U);
    BOOST_CHECK_EQUAL(v.frames_checked, 7040U);
    BOOST_CHECK_EQUAL(v.unreadable, 5040U);
    BOOST_CHECK(v.gaps.empty());
}

BOOST_AUTO_TEST_CASE(a_gap_is_found_and_explained_only_by_its_own_cause) {
    LatestNumbers latest{};
    Sink a("a", latest);
    a.feed(numbered(4, 0, 1000), 1);
    a.feed(numbered(4, 1500, 1000), 2); // 500 lost
    a.feed(numbered(4, 2500, 1000), 3);
    a.feed(numbered(4, 3400, 100), 4); // 100 played twice
    a.ledger.finish();
    const Verdict unexplained = judge(a.ledger.runs(), {{9, "", 0, 10, "client 9 stopped"}}, 0.5);
    BOOST_REQUIRE_EQUAL(unexplained.gaps.size(), 1U);
    BOOST_CHECK_EQUAL(unexplained.gaps[0].after, 999U);
    BOOST_CHECK_EQUAL(unexplained.gaps[0].frames, 500U);
    BOOST_CHECK_EQUAL(unexplained.lost_without_cause(), 500U);
    BOOST_REQUIRE_EQUAL(unexplained.overlaps.size(), 1U);
    BOOST_CHECK_EQUAL(unexplained.overlaps[0].from, 3400U);
    BOOST_CHECK_EQUAL(unexplained.overlaps[0].frames, 100U);
    // The gap (1.0-2.0 s) is within 0.5 s of the stop, and within the mute.
    const Verdict explained =
        judge(a.ledger.runs(),
              {{4, "", 0.2, 0.6, "stream 4 stopped"}, {4, "", 1.2, 1.8, "stream 4 muted"}}, 0.5);
    BOOST_REQUIRE_EQUAL(explained.gaps.size(), 1U);
    BOOST_CHECK_EQUAL(explained.gaps[0].cause, "stream 4 muted");
    BOOST_CHECK_EQUAL(explained.lost_without_cause(), 0U);
    BOOST_CHECK(explained.worst_without_cause() == nullptr);
}

BOOST_AUTO_TEST_CASE(two_streams_mixed_are_no_run_of_either) {
    LatestNumbers latest{};
    Sink a("a", latest);
    auto one = numbered(1, 0, 2000), two = numbered(2, 0, 2000);
    for (size_t i = 0; i < one.size(); ++i) {
        one[i] = static_cast<int16_t>(one[i] + two[i]);
    }
    a.feed(one, 1);
    a.ledger.finish();
    BOOST_CHECK(a.ledger.runs().empty());
    BOOST_CHECK_EQUAL(a.ledger.stray_frames(), 2000U);
}

BOOST_AUTO_TEST_CASE(numbers_unwrap_past_the_wrap) {
    LatestNumbers latest{};
    Sink a("a", latest);
    a.feed(numbered(6, kNumberedWrap - 500, 1000), 1);
    a.feed(silence(10), 2);
    a.feed(numbered(6, kNumberedWrap + 700, 100), 3); // 200 lost, past the wrap
    a.ledger.finish();
    const Verdict v = judge(a.ledger.runs(), {}, 1);
    BOOST_REQUIRE_EQUAL(v.gaps.size(), 1U);
    BOOST_CHECK_EQUAL(v.gaps[0].frames, 200U);
    BOOST_CHECK_EQUAL(v.frames_checked, 1100U);
}

BOOST_AUTO_TEST_SUITE_END()
