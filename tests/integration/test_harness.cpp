// The test harness's own promises, where a failure depends on them: a
// program killed at its deadline, or still running past a bound its test
// gives, says where each of its threads was, so that a hang or a slow run
// seen once on a loaded machine can be read, not guessed.
#include "helpers.h"

#include <boost/test/unit_test.hpp>

using namespace audiod::test;
using namespace std::chrono_literals;

namespace {

// Once it is sleep, not the forked test process still on its way to exec.
void require_sleeping(const BackgroundProgram& sleeper) {
    BOOST_REQUIRE(eventually(
        [&] {
            return file_contents("/proc/" + std::to_string(sleeper.pid()) + "/comm") == "sleep\n";
        },
        30s));
}

} // namespace

BOOST_AUTO_TEST_SUITE(harness)

BOOST_AUTO_TEST_CASE(a_program_past_its_deadline_says_where_its_threads_were) {
    BackgroundProgram sleeper({"/bin/sleep", "60"});
    require_sleeping(sleeper);
    const ProgramResult r = sleeper.finish(200ms);
    BOOST_CHECK_EQUAL(r.status, -1);
    BOOST_CHECK_MESSAGE(
        r.err.find("killed by the test: still running after 200 ms") != std::string::npos, r.err);
    // Its one thread, asleep in the kernel (which function the kernel names
    // varies), and its stack from gdb, in nanosleep.
    BOOST_CHECK_MESSAGE(r.err.find("(sleep) S in ") != std::string::npos, r.err);
    BOOST_CHECK_MESSAGE(r.err.find("#0 ") != std::string::npos &&
                            r.err.find("nanosleep") != r.err.rfind("nanosleep"),
                        r.err);
}

// A program a test gives a bound is looked at when it overstays it, and
// left to finish: a slow run says where it was slow.
BOOST_AUTO_TEST_CASE(a_program_past_its_bound_is_looked_at_and_left_to_finish) {
    BackgroundProgram sleeper({"/bin/sleep", "3"});
    require_sleeping(sleeper);
    const ProgramResult r = sleeper.finish(60s, 1ms);
    BOOST_CHECK_EQUAL(r.status, 0);
    BOOST_CHECK_GE(r.seconds, 3.0);
    BOOST_CHECK_MESSAGE(r.overdue.find("(sleep) ") != std::string::npos, r.overdue);
    const ProgramResult quick = run_program({"/bin/true"}, 60s, {}, 30s);
    BOOST_CHECK_EQUAL(quick.status, 0);
    BOOST_CHECK_MESSAGE(quick.overdue.empty(), quick.overdue);
}

BOOST_AUTO_TEST_SUITE_END()
