// PortAudio's set-up calls take turns (setup_mutex, pa_host.h): an open
// that comes while a stream is still being closed on its own thread is
// refused at once, so that the control thread neither runs PortAudio beside
// that thread nor waits for a close that may never return; and the process
// does not end beneath such a close.
#include <boost/test/unit_test.hpp>

#include "pa_stream.h"
#include "unit/modules/portaudio/test_card_dir.h"

#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <future>
#include <iostream>
#include <string>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>

using namespace audiod::portaudio;

namespace {

const audiod_option kTurnsOptions[] = {{"device", "testcard"}};
const audiod_device_config kTurnsConfig{"turns", 48000, 2, 256, kTurnsOptions, 1};

} // namespace

BOOST_AUTO_TEST_SUITE(setup_turns)

BOOST_AUTO_TEST_CASE(an_open_while_a_close_is_under_way_is_refused_at_once) {
    const auto card = audiod::test::use_test_card("turns");

    // Another thread inside PortAudio's set-up, as a close in progress is.
    std::promise<void> holding;
    std::promise<void> let_go;
    std::thread closer([&] {
        const std::lock_guard setup(setup_mutex());
        holding.set_value();
        let_go.get_future().wait();
    });
    holding.get_future().wait();
    audiod_open_info info{};
    std::string error;
    int code = 0;
    BOOST_CHECK(open_device(nullptr, kTurnsConfig, false, &info, &error, &code, true) == nullptr);
    BOOST_CHECK_EQUAL(code, -EAGAIN);
    BOOST_CHECK_MESSAGE(error.find("still closing") != std::string::npos, error);
    let_go.set_value();
    closer.join();

    // Its turn over, the same open succeeds.
    error.clear();
    code = 0;
    PaDevice* device = open_device(nullptr, kTurnsConfig, false, &info, &error, &code, true);
    BOOST_REQUIRE_MESSAGE(device != nullptr, error);
    close_device(device);
    std::filesystem::remove_all(card);
}

// A close that outlasts close_device's 300 ms is waited for as the process
// ends: a server under ASan once ended on SIGABRT beneath one (its source's
// close after an unplug), and a test process reported a leak so.
BOOST_AUTO_TEST_CASE(the_process_ends_only_once_a_close_under_way_is_done) {
    const auto card = audiod::test::use_test_card("exit");
    // No earlier close may still hold the lock into the child.
    setup_mutex().lock();
    setup_mutex().unlock();
    std::cout.flush(); // (not printed twice)
    const pid_t child = ::fork();
    BOOST_REQUIRE(child >= 0);
    if (child == 0) {
        audiod_open_info info{};
        std::string error;
        int code = 0;
        PaDevice* device = open_device(nullptr, kTurnsConfig, false, &info, &error, &code, true);
        if (device == nullptr) {
            std::_Exit(2);
        }
        // (Not before the open: PortAudio opens and closes every PCM as it
        // lists them.)
        std::ofstream(card / "slow-close").put('\n');
        close_device(device); // back after 300 ms, the card's close still running
        std::exit(0);
    }
    int status = 0;
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
    bool ended = false;
    while (!(ended = ::waitpid(child, &status, WNOHANG) == child) &&
           std::chrono::steady_clock::now() < deadline) {
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    if (!ended) {
        ::kill(child, SIGKILL);
        ::waitpid(child, &status, 0);
    }
    BOOST_CHECK_MESSAGE(ended, "the child had not ended after 30 s");
    BOOST_CHECK_MESSAGE(WIFEXITED(status) && WEXITSTATUS(status) == 0,
                        "the child ended with status " << status);
    BOOST_CHECK_MESSAGE(std::filesystem::exists(card / "closed"),
                        "the process ended beneath the close");
    std::filesystem::remove_all(card);
}

BOOST_AUTO_TEST_SUITE_END()
