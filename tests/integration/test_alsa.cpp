// The alsa sink through the real snd_pcm_* code path, on the test sound
// card (tests/fixtures/fake_card): what it plays, recovery from underruns
// and suspends, and a device that is unplugged and comes back.
#include "fixtures/fixture_signals.h"
#include "helpers.h"

#include <boost/test/unit_test.hpp>

#include <csignal>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <set>
#include <thread>

using namespace audiod;
using namespace audiod::test;
using namespace std::chrono_literals;

namespace {

// A server whose "card" sink is the test sound card in `dir`/card, with a
// file sink "spare" beside it. A generous device buffer (16 quanta, 85 ms)
// keeps this machine's scheduling jitter from causing xruns of its own.
struct CardServer {
    explicit CardServer(const TempDir& dir, const std::string& periods = "16") {
        card = use_test_card(dir);
        server = std::make_unique<ServerProcess>(
            "[server]\nrt-priority = 20\ndefault-sink = \"card\"\n\n[sinks.card]\ntype = "
            "\"alsa\"\ndevice = \"testcard\"\nperiods = " +
            periods + "\n\n[sinks.spare]\ntype = \"file\"\npath = \"" + dir.file("spare.wav") +
            "\"\n");
    }

    std::string card;
    std::unique_ptr<ServerProcess> server;
};

std::vector<uint64_t> sequence_of(const std::vector<int16_t>& samples) {
    std::vector<uint64_t> out;
    for (size_t f = 0; f + 1 < samples.size(); f += 2) {
        if (samples[f] != 0 || samples[f + 1] != 0) {
            out.push_back(sequence_number(samples[f], samples[f + 1]));
        }
    }
    return out;
}

std::vector<int16_t> raw_s16(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    const std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    std::vector<int16_t> samples(bytes.size() / 2);
    std::memcpy(samples.data(), bytes.data(), samples.size() * 2);
    return samples;
}

} // namespace

BOOST_AUTO_TEST_SUITE(alsa)

BOOST_AUTO_TEST_CASE(plays_exactly_what_it_is_given_through_the_real_alsa_path) {
    TempDir dir;
    CardServer card(dir);
    const ProgramResult r =
        run_tool("audiod-test-client", {"--signal", "sequence", "--frames", "96000"}, 60s);
    BOOST_REQUIRE_MESSAGE(r.status == 0, r.err);
    const std::string xruns = sink_field("card", "xruns");
    BOOST_CHECK_EQUAL(sink_field("card", "latency_frames"), std::to_string(16 * 256));
    BOOST_CHECK_EQUAL(sink_field("card", "type"), "alsa");
    BOOST_REQUIRE_EQUAL(card.server->stop(SIGTERM), 0);
    const auto heard = sequence_of(raw_s16(card.card + "/played.raw"));
    if (xruns == "0") {
        // Every frame, once, in order.
        BOOST_REQUIRE_EQUAL(heard.size(), 96000u);
        for (uint64_t i = 0; i < heard.size(); ++i) {
            BOOST_REQUIRE_EQUAL(heard[i], i);
        }
    } else {
        // This machine's scheduling made the device underrun: what played
        // is still in order, only the frames in the device buffer went.
        BOOST_TEST_MESSAGE("the card reported " << xruns << " xruns of its own");
        BOOST_CHECK(only_increasing(heard));
        BOOST_CHECK_GT(heard.size(), 90000u);
    }
}

BOOST_AUTO_TEST_CASE(underruns_and_suspends_are_recovered_without_dropping_streams) {
    TempDir dir;
    CardServer card(dir);
    // Up to a minute of the sequence, ended once the faults are over.
    PlayingClient client({"--signal", "sequence", "--app", "survivor"});
    const auto id = wait_for_stream(30s);
    BOOST_REQUIRE(id);
    BOOST_REQUIRE(wait_for_position(*id, 24000));
    const auto xruns = [] { return sink_number("card", "xruns"); };
    const uint64_t before = xruns();
    touch(card.card + "/xrun");
    BOOST_CHECK(eventually([&] { return xruns() > before; }, 20s));
    BOOST_REQUIRE(wait_for_more(*id, 12000));
    // The card stays suspended until the sink has seen it.
    const uint64_t after_xrun = xruns();
    touch(card.card + "/suspend");
    BOOST_CHECK(eventually([&] { return xruns() > after_xrun; }, 20s));
    ::unlink((card.card + "/suspend").c_str());
    BOOST_REQUIRE(wait_for_more(*id, 12000));
    const ProgramResult r = client.stop();
    BOOST_REQUIRE_MESSAGE(r.status == 0, r.err);
    const uint64_t written = json_number(r.out, "written").value_or(0);
    // The stream was never dropped or moved: it stayed on the card.
    const int64_t faults = static_cast<int64_t>(xruns() - before);
    BOOST_CHECK_GE(faults, 2);
    BOOST_CHECK_EQUAL(sink_field("card", "state"), "running");
    BOOST_REQUIRE_EQUAL(card.server->stop(SIGTERM), 0);
    const auto heard = sequence_of(raw_s16(card.card + "/played.raw"));
    BOOST_CHECK(only_increasing(heard));
    BOOST_CHECK_EQUAL(heard.back(), written - 1);
    // Only what sat in the device's buffer (16 periods of 256 frames) at
    // each fault is lost: the two made here and any that this machine's
    // scheduling made of its own (a TSan stress pass had about 24). When
    // those eat most of what was written, order and the last frame above
    // are all there is to judge, as in the case before.
    BOOST_TEST_MESSAGE("device xruns during the test: " << faults);
    const int64_t allowed_loss = (faults + 1) * 16 * 256 + 48000;
    const int64_t least = static_cast<int64_t>(written) - allowed_loss;
    if (least > 0) {
        BOOST_CHECK_GT(static_cast<int64_t>(heard.size()), least);
    }
}

BOOST_AUTO_TEST_CASE(an_unplugged_device_hands_its_streams_over_and_takes_them_back) {
    TempDir dir;
    CardServer card(dir);
    PlayingClient client({"--signal", "sequence", "--sink", "card", "--app", "faithful"});
    const auto id = wait_for_stream(30s);
    BOOST_REQUIRE(id);
    BOOST_REQUIRE(wait_for_position(*id, 24000));
    touch(card.card + "/unplug");
    // The sink fails; its stream moves to the other sink and keeps playing.
    const bool failed = wait_for_sink_state("card", "failed", 20s);
    // (Seen once under ASan on a loaded machine and not reproduced: the
    // server's own account, for whoever meets it next.)
    BOOST_CHECK_MESSAGE(failed, "the card sink never failed; server log:\n"
                                    << card.server->log()
                                    << "\nsinks: " << run_tool("audioctl", {"list", "sinks"}).out);
    BOOST_CHECK(eventually([&] { return stream_field(*id, "device") == "spare"; }, 20s));
    BOOST_REQUIRE(wait_for_more(*id, 12000));
    ::unlink((card.card + "/unplug").c_str());
    // The device is back: the sink reopens and the stream returns to it.
    BOOST_CHECK(wait_for_sink_state("card", "running", 20s));
    BOOST_CHECK(eventually([&] { return stream_field(*id, "device") == "card"; }, 20s));
    BOOST_REQUIRE(wait_for_more(*id, 12000));
    const ProgramResult r = client.stop();
    BOOST_REQUIRE_MESSAGE(r.status == 0, r.err);
    const uint64_t written = json_number(r.out, "written").value_or(0);
    BOOST_REQUIRE_EQUAL(card.server->stop(SIGTERM), 0);
    BOOST_CHECK(card.server->log().find("sink card is back") != std::string::npos);

    const auto on_card = sequence_of(raw_s16(card.card + "/played.raw"));
    const auto on_spare = sequence_of(read_wav_s16(dir.file("spare.wav")));
    BOOST_CHECK(!on_spare.empty());
    BOOST_CHECK(only_increasing(on_card));
    BOOST_CHECK(only_increasing(on_spare));
    // No frame played twice; only the device buffer at the unplug is lost.
    std::set<uint64_t> all(on_card.begin(), on_card.end());
    for (const uint64_t v : on_spare) {
        BOOST_CHECK_MESSAGE(all.insert(v).second, "frame " << v << " played twice");
    }
    BOOST_CHECK_GT(all.size(), written - 2 * 16 * 256);
    BOOST_CHECK_EQUAL(on_card.back(), written - 1);
}

BOOST_AUTO_TEST_CASE(bad_devices_and_options_are_refused_clearly) {
    TempDir dir;
    CardServer card(dir);
    ProgramResult r = run_tool("audioctl", {"load-sink", "alsa", "nowhere", "device=no-such-pcm"});
    BOOST_CHECK_EQUAL(r.status, 1);
    BOOST_CHECK_MESSAGE(r.err.find("cannot open ALSA device 'no-such-pcm'") != std::string::npos,
                        r.err);
    r = run_tool("audioctl", {"load-sink", "alsa", "x", "device=testcard", "periods=99"});
    BOOST_CHECK_EQUAL(r.status, 1);
    BOOST_CHECK(r.err.find("periods = 99 is not in 2..16") != std::string::npos);
    r = run_tool("audioctl", {"load-sink", "alsa", "y", "colour=red"});
    BOOST_CHECK_EQUAL(r.status, 1);
    BOOST_CHECK(r.err.find("no option 'colour'") != std::string::npos);
    // A second card sink on the same device works too (the test card is not exclusive).
    r = run_tool("audioctl", {"load-sink", "alsa", "second", "device=testcard", "periods=4"});
    BOOST_CHECK_MESSAGE(r.status == 0, r.err);
    BOOST_CHECK_EQUAL(sink_field("second", "latency_frames"), std::to_string(4 * 256));
    BOOST_CHECK_EQUAL(card.server->stop(SIGTERM), 0);
}

BOOST_AUTO_TEST_SUITE_END()
