// The way out of PortAudio 19.6's endless xrun recovery (recovery_escape.h),
// through PortAudio's real ALSA host API on the test sound card: a blocking
// read or write that starts after the card has gone returns
// paDeviceUnavailable instead of never returning, and a card that is there
// reads and writes as without the wrapper.
//
// The card is unplugged before the call, not during it: PortAudio's own
// first step in the call (it asks the card how much is available) is then
// the one that finds the card gone, which is what happens to the server
// when a card goes between its check (check_present) and the call — the
// window this escape is for, too narrow to hit on purpose in a running
// server.
#include <boost/test/unit_test.hpp>

#include "recovery_escape.h"
#include "unit/modules/portaudio/test_card_dir.h"

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <future>
#include <memory>
#include <string>
#include <thread>
#include <unistd.h>
#include <vector>

using namespace audiod::portaudio;
using namespace std::chrono_literals;

namespace {

// PortAudio started on the test card, in a directory of its own.
struct TestCard {
    TestCard() {
        dir = audiod::test::use_test_card("escape");
        BOOST_REQUIRE_EQUAL(Pa_Initialize(), paNoError);
        for (int i = 0; i < Pa_GetDeviceCount(); ++i) {
            const PaDeviceInfo* info = Pa_GetDeviceInfo(i);
            if (std::string(info->name) == "testcard" &&
                std::string(Pa_GetHostApiInfo(info->hostApi)->name) == "ALSA") {
                device = i;
            }
        }
        BOOST_REQUIRE_MESSAGE(device >= 0, "PortAudio lists no ALSA device named testcard");
    }
    ~TestCard() {
        Pa_Terminate();
        std::filesystem::remove_all(dir);
    }

    PaStream* open(bool capture) const {
        PaStreamParameters params{};
        params.device = device;
        params.channelCount = 2;
        params.sampleFormat = paInt32;
        params.suggestedLatency = 0.085;
        PaStream* stream = nullptr;
        const PaError err =
            Pa_OpenStream(&stream, capture ? &params : nullptr, capture ? nullptr : &params, 48000,
                          256, paDitherOff | paClipOff, nullptr, nullptr);
        BOOST_REQUIRE_MESSAGE(err == paNoError, Pa_GetErrorText(err));
        BOOST_REQUIRE_EQUAL(Pa_StartStream(stream), paNoError);
        return stream;
    }

    void unplug() const { std::ofstream(dir / "unplug").put('\n'); }

    std::filesystem::path dir;
    int device = -1;
};

// Runs `transfer` on a thread of its own and waits for it at most 20 s. One
// still running then is in PortAudio's endless recovery and never returns:
// the test process ends there, as nothing else could end it.
PaError within_deadline(const std::function<PaError()>& transfer) {
    auto done = std::make_shared<std::promise<PaError>>();
    std::future<PaError> result = done->get_future();
    std::thread([transfer, done] { done->set_value(transfer()); }).detach();
    if (result.wait_for(20s) != std::future_status::ready) {
        std::fprintf(stderr, "the transfer has not returned after 20 s: PortAudio's xrun "
                             "recovery loops, and nothing took the call out of it\n");
        std::_Exit(1);
    }
    return result.get();
}

} // namespace

BOOST_AUTO_TEST_SUITE(recovery_escape)

BOOST_AUTO_TEST_CASE(a_read_after_the_card_has_gone_returns_device_unavailable) {
    TestCard card;
    PaStream* stream = card.open(true);
    std::vector<int32_t> frames(256 * 2);
    // A card that is there: the card's sequence signal, quantum after quantum.
    for (int i = 0; i < 8; ++i) {
        while (Pa_GetStreamReadAvailable(stream) < 256) {
            Pa_Sleep(1);
        }
        BOOST_REQUIRE_EQUAL(read_stream(stream, frames.data(), 256), paNoError);
    }
    BOOST_CHECK_NE(frames[0], 0);
    BOOST_CHECK_EQUAL(frames[2] - frames[0], 1 << 16); // the sequence counts up by one
    card.unplug();
    BOOST_CHECK_EQUAL(within_deadline([&] { return read_stream(stream, frames.data(), 256); }),
                      paDeviceUnavailable);
    // Left where it was, the stream still closes.
    Pa_AbortStream(stream);
    BOOST_CHECK_EQUAL(Pa_CloseStream(stream), paNoError);
}

BOOST_AUTO_TEST_CASE(a_write_after_the_card_has_gone_returns_device_unavailable) {
    TestCard card;
    PaStream* stream = card.open(false);
    const std::vector<int32_t> frames(256 * 2, 1 << 16);
    for (int i = 0; i < 8; ++i) {
        BOOST_REQUIRE_EQUAL(write_stream(stream, frames.data(), 256), paNoError);
    }
    card.unplug();
    BOOST_CHECK_EQUAL(within_deadline([&] { return write_stream(stream, frames.data(), 256); }),
                      paDeviceUnavailable);
    Pa_AbortStream(stream);
    BOOST_CHECK_EQUAL(Pa_CloseStream(stream), paNoError);
}

BOOST_AUTO_TEST_CASE(the_thread_that_escaped_reads_a_card_that_came_back) {
    TestCard card;
    std::vector<int32_t> frames(256 * 2);
    // One thread for all of it: the escape must leave nothing of itself on
    // the thread (its handler, its state) for the next call to trip over.
    const PaError after = within_deadline([&] {
        PaStream* stream = card.open(true);
        card.unplug();
        const PaError escaped = read_stream(stream, frames.data(), 256);
        Pa_AbortStream(stream);
        Pa_CloseStream(stream);
        if (escaped != paDeviceUnavailable) {
            return escaped == paNoError ? paInternalError : escaped;
        }
        std::filesystem::remove(card.dir / "unplug");
        stream = card.open(true);
        while (Pa_GetStreamReadAvailable(stream) < 256) {
            Pa_Sleep(1);
        }
        const PaError read = read_stream(stream, frames.data(), 256);
        Pa_AbortStream(stream);
        Pa_CloseStream(stream);
        return read;
    });
    BOOST_CHECK_EQUAL(after, paNoError);
    BOOST_CHECK_NE(frames[0], 0);
}

BOOST_AUTO_TEST_SUITE_END()
