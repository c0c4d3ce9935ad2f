// The state file's writer thread: what is submitted reaches the file (the
// newest text when several wait), a write that fails is reported once, and
// the writer finishes a pending write before it goes.
#include "engine/state_file_writer.h"
#include "unit/scratch_dir.h"

#include <boost/test/unit_test.hpp>

using namespace audiod;

using audiod::test::read_text;
using audiod::test::ScratchDir;

BOOST_AUTO_TEST_SUITE(state_file_writer)

BOOST_AUTO_TEST_CASE(the_newest_text_reaches_the_file) {
    ScratchDir dir;
    const std::string path = dir.file("sub/state"); // a parent to make
    StateFileWriter writer;
    for (int i = 0; i < 50; ++i) {
        writer.submit(path, "version " + std::to_string(i) + "\n");
    }
    BOOST_REQUIRE(writer.flush(std::chrono::seconds(30)));
    BOOST_CHECK_EQUAL(read_text(path), "version 49\n");
    BOOST_CHECK_EQUAL(writer.take_failure(), "");
    BOOST_CHECK(::access((path + ".tmp").c_str(), F_OK) != 0); // renamed into place
}

BOOST_AUTO_TEST_CASE(a_failed_write_is_reported_once_and_the_next_one_works) {
    ScratchDir dir;
    const std::string blocker = dir.file("file");
    std::ofstream(blocker) << "not a directory";
    StateFileWriter writer;
    writer.submit(blocker + "/state", "x\n"); // its parent is a file
    BOOST_REQUIRE(writer.flush(std::chrono::seconds(30)));
    const std::string failure = writer.take_failure();
    BOOST_CHECK_MESSAGE(failure.find("cannot write " + blocker + "/state.tmp") == 0, failure);
    BOOST_CHECK_EQUAL(writer.take_failure(), "");
    writer.submit(dir.file("state"), "y\n");
    BOOST_REQUIRE(writer.flush(std::chrono::seconds(30)));
    BOOST_CHECK_EQUAL(writer.take_failure(), "");
    BOOST_CHECK_EQUAL(read_text(dir.file("state")), "y\n");
}

BOOST_AUTO_TEST_CASE(a_writer_going_away_finishes_what_it_was_given) {
    ScratchDir dir;
    {
        StateFileWriter writer;
        writer.submit(dir.file("state"), "last words\n");
    }
    BOOST_CHECK_EQUAL(read_text(dir.file("state")), "last words\n");
}

BOOST_AUTO_TEST_SUITE_END()
