// A source whose device is in a helper process (remote_device.h), driven by
// hand as the server's RT thread drives it: what the helper records while
// the source is late waits in the ring, as it would in a device's buffer.
#include <boost/test/unit_test.hpp>

#include "fixtures/fixture_signals.h"
#include "unit/modules/portaudio/module_on_test_card.h"

#include <chrono>
#include <thread>
#include <vector>

using namespace std::chrono_literals;

namespace {

constexpr uint32_t kQuantum = 256;
// PortAudio's buffer in the helper: enough that a loaded machine does not
// make the card overrun while the helper is late itself.
const audiod_option kLateOptions[] = {
    {"device", "testcard"}, {"latency-ms", "200"}, {"process", "own"}};
const audiod_device_config kLateConfig{"late", 48000, 2, kQuantum, kLateOptions, 3};

// The sequence number of a captured s32 frame (the card's 16-bit sample in
// the top half).
uint64_t frame_number(const std::vector<int32_t>& frames, uint32_t frame) {
    return audiod::test::sequence_number(static_cast<int16_t>(frames[2 * frame] >> 16),
                                         static_cast<int16_t>(frames[2 * frame + 1] >> 16));
}

} // namespace

BOOST_AUTO_TEST_SUITE(helper_capture)

// 150 ms late is 28 quanta: a ring of two quanta dropped all but two of
// them (a CI run under ASan lost one quantum of a recording so).
BOOST_AUTO_TEST_CASE(what_the_helper_records_while_the_source_is_late_is_kept) {
    audiod::test::ModuleOnTestCard m;
    const audiod_source_ops& ops = *m.module->source;
    void* source = nullptr;
    audiod_open_info info{};
    char error[512] = {};
    BOOST_REQUIRE_MESSAGE(ops.open(&m.host, &kLateConfig, &source, &info, error, sizeof error) == 0,
                          error);
    std::vector<int32_t> frames(size_t{kQuantum} * 2);
    BOOST_REQUIRE_EQUAL(ops.start(source), 0);
    BOOST_REQUIRE_EQUAL(ops.wait(source), 0);
    BOOST_REQUIRE_EQUAL(ops.read(source, frames.data(), kQuantum), 0);
    uint64_t next = frame_number(frames, kQuantum - 1) + 1;
    const uint64_t xruns = ops.xruns(source);

    std::this_thread::sleep_for(150ms);
    for (int cycle = 0; cycle < 60; ++cycle) {
        BOOST_REQUIRE_EQUAL(ops.wait(source), 0);
        BOOST_REQUIRE_EQUAL(ops.read(source, frames.data(), kQuantum), 0);
        for (uint32_t f = 0; f < kQuantum; ++f, ++next) {
            BOOST_REQUIRE_MESSAGE(frame_number(frames, f) == next,
                                  "cycle " << cycle << " frame " << f << ": "
                                           << frame_number(frames, f) << " where " << next
                                           << " was due");
        }
    }
    BOOST_CHECK_EQUAL(ops.xruns(source), xruns);
    ops.stop(source);
    ops.close(source);
}

BOOST_AUTO_TEST_SUITE_END()
