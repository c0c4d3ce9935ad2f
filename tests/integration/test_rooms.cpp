// Rooms in sync, and the rig's own parts, through the real server: sinks
// whose clocks are set apart (clock-ppm) and that say when each frame
// played (play-times), measured by audiod-sync-probe; and RTP receivers
// with a link offset playing one sender's stream into such rooms, heard
// within 100 µs of each other.
#include "house.h"

#include <boost/test/unit_test.hpp>

#include <algorithm>
#include <cmath>
#include <csignal>
#include <functional>
#include <map>
#include <memory>
#include <sstream>
#include <utility>
#include <vector>

using namespace audiod;
using namespace audiod::test;
using namespace std::chrono_literals;

BOOST_AUTO_TEST_SUITE(rooms)

// Two rooms on one machine, one 100 ppm slow and one 100 ppm fast, each
// playing the probe: the measurement sees them drift apart by 200 µs a
// second and hear every sample once.
BOOST_AUTO_TEST_CASE(rooms_on_clocks_200_ppm_apart_are_measured_drifting_200_ppm) {
    TempDir dir;
    ServerProcess server("[server]\nrt-priority = 0\nquantum = 480\n" +
                         room_sink(dir, "slow", -100) + room_sink(dir, "fast", 100));
    const ProgramResult made =
        run_tool("audiod-sync-probe", {"make", "--seconds", "6", dir.file("probe.wav")});
    BOOST_REQUIRE_MESSAGE(made.status == 0, made.err);
    // A long buffer, so that a loaded machine does not make either player
    // run dry (which would be a gap in what the room heard).
    const auto player = [&](const std::string& sink) {
        return std::vector<std::string>{
            bin("audioplay"),     "--quiet", "--sink", sink, "--latency-ms", "500",
            dir.file("probe.wav")};
    };
    BackgroundProgram slow(player("slow"));
    const ProgramResult fast = run_program(player("fast"), 60s);
    BOOST_REQUIRE_MESSAGE(fast.status == 0, fast.err);
    BOOST_REQUIRE_EQUAL(slow.finish(60s).status, 0);
    BOOST_REQUIRE_EQUAL(server.stop(SIGTERM), 0);

    const ProgramResult measured = run_tool(
        "audiod-sync-probe", {"measure", "--json", "--settle", "0",
                              "slow=" + dir.file("slow.wav") + "," + dir.file("slow.times"),
                              "fast=" + dir.file("fast.wav") + "," + dir.file("fast.times")});
    BOOST_REQUIRE_MESSAGE(measured.status == 0, measured.err);
    BOOST_TEST_MESSAGE(measured.out);
    const std::string& out = measured.out;
    const size_t fast_line = out.find("\"room\":\"fast\"");
    const size_t pair_line = out.find("\"pair\"");
    BOOST_REQUIRE(fast_line != std::string::npos && pair_line != std::string::npos);
    for (const size_t at : {size_t{0}, fast_line}) {
        const std::string line = out.substr(at, out.find('\n', at) - at);
        BOOST_CHECK_MESSAGE(line.find("\"heard\":true") != std::string::npos, line);
        BOOST_CHECK_LE(json_number(line, "first_index").value_or(99), 8u); // the wrap is left out
        BOOST_CHECK_EQUAL(json_number(line, "discontinuities").value_or(1), 0u);
        BOOST_CHECK_GE(json_number(line, "frames").value_or(0), 6u * 48000 - 10);
    }
    // The fast room plays each sample earlier than the slow one by 200 µs
    // more every second (1/0.9999 − 1/1.0001 of a second a second).
    const auto drift = json_real(out.substr(pair_line), "drift_ppm");
    BOOST_REQUIRE(drift);
    BOOST_CHECK_CLOSE(*drift, 1e6 * (1 / 0.9999 - 1 / 1.0001) / (1 / 0.9999), 2.0);
}

namespace {

// Plays 16 s of the probe through two rooms (clocks -100 and +100 ppm),
// calls `restart` once 4 s have played, and checks that the rooms re-join
// within 100 µs of each other within 5 s of the gap it leaves (and hold
// it for a second), as the issue asks. (A new sender's timeline may
// differ from the old by less than a re-alignment's threshold in one room:
// that room's loop then works the difference off within a second or two.
// That the rooms then stay within 100 µs the three-room cases check: here,
// under CI's load, a sender's thread once held up later made both rooms
// step and re-align, which is no part of a restart.)
void check_in_step_after(const std::function<void(const House&, uint32_t player)>& restart) {
    TempDir dir;
    const House house(dir, {{"kitchen", -100}, {"hall", 100}});
    ServerProcess server(house.config());
    BackgroundProgram player(probe_player(dir, 16));
    const auto id = wait_for_playing("audioplay", 30s, 4 * 48000);
    BOOST_REQUIRE_MESSAGE(id, player.errors_so_far());
    restart(house, *id);
    BOOST_REQUIRE_EQUAL(player.finish(120s).status, 0);
    wait_until_rooms_heard(house);
    BOOST_REQUIRE_EQUAL(server.stop(SIGTERM), 0);

    const std::string out = house.measure(0);
    BOOST_TEST_MESSAGE(json_line(out, "{\"pair\""));
    const double away = gap_start(out, "kitchen-hall");
    BOOST_REQUIRE_GT(away, 2.0);
    const After after = series_after(out, "kitchen-hall", away + 0.001);
    BOOST_TEST_MESSAGE("back after " << after.first_s - away << " s, within 100 us after "
                                     << after.settled_s - away << " s, at most " << after.max_us
                                     << " us apart since the gap");
    BOOST_CHECK_GT(after.points, 300u);
    BOOST_CHECK_MESSAGE(after.rejoined_s >= 0 && after.rejoined_s - away <= 5,
                        "re-joined within 100 us after "
                            << after.rejoined_s - away << " s (-1: never), " << after.points
                            << " points since the gap, at most " << after.max_us << " us apart");
}

// Plays 12 s of the probe through a house of three rooms, whose clocks
// are off by -100, 0 and +100 ppm, and measures them once settled.
std::string three_rooms_heard(const TempDir& dir, const std::string& payload, bool bursts) {
    const House house(dir, {{"kitchen", -100}, {"hall", 0}, {"study", 100}}, payload);
    ServerProcess server(house.config());
    const ProgramResult played = run_program(probe_player(dir, 12, !bursts), 120s);
    BOOST_REQUIRE_MESSAGE(played.status == 0, played.err);
    wait_until_rooms_heard(house);
    const ProgramResult sources = run_tool("audioctl", {"list", "sources"});
    BOOST_CHECK_MESSAGE(sources.out.find("play-timed=yes") != std::string::npos, sources.out);
    BOOST_REQUIRE_EQUAL(server.stop(SIGTERM), 0);
    // Bursts come every half second: from 5 s on, 10 to 12 of the 14 a
    // pair shares were read (a CI run read 9, under a floor of 10); from
    // 2 s on, some 20 are. (Convergence is checked apart, from the start.)
    return house.measure(bursts ? 2 : 5, bursts);
}

} // namespace

// One sender, three receivers with the same link offset, each playing
// into a room whose clock is off by -100, 0 and +100 ppm, over L24: once
// in step (within 5 s) every pair hears each sample within 100 µs of the
// other, and no room loses or repeats a sample.
BOOST_AUTO_TEST_CASE(three_receivers_with_one_link_offset_hear_each_sample_within_100_us) {
    TempDir dir;
    const std::string out = three_rooms_heard(dir, "l24", false);
    for (const char* name : {"kitchen", "hall", "study"}) {
        const std::string line = json_line(out, "{\"room\":\"" + std::string(name) + "\"");
        BOOST_TEST_MESSAGE(line);
        BOOST_CHECK_MESSAGE(line.find("\"heard\":true") != std::string::npos, line);
        BOOST_CHECK_MESSAGE(json_number(line, "discontinuities").value_or(1) == 0, line);
    }
    check_pairs_in_step(out, 500);
}

// The same over Opus, measured by the probe's noise bursts (a lossy codec
// keeps no sample-index ramp): every receiver decodes the same packets,
// and plays them as much in step.
BOOST_AUTO_TEST_CASE(over_opus_the_rooms_are_as_much_in_step) {
    TempDir dir;
    check_pairs_in_step(three_rooms_heard(dir, "opus", true), 10);
}

// Each room behind a network of its own (a relay from the group: 1 % of
// packets lost, up to 1 ms of jitter, its own seed): the losses are
// concealed where they fall, and the rooms stay as much in step.
BOOST_AUTO_TEST_CASE(through_networks_with_loss_and_jitter_the_rooms_stay_in_step) {
    TempDir dir;
    House house(dir, {{"kitchen", -100}, {"hall", 0}, {"study", 100}}, "l24");
    std::vector<std::unique_ptr<BackgroundProgram>> relays;
    unsigned seed = 1;
    for (const auto& [name, ppm] : house.rooms) {
        const uint16_t to = free_udp_port_pair();
        house.networks[name] = to;
        relays.push_back(std::make_unique<BackgroundProgram>(std::vector<std::string>{
            bin("audiod-udp-relay"), "--group", house.group, "--listen", std::to_string(house.port),
            "--to", "127.0.0.1:" + std::to_string(to), "--loss", "1", "--jitter-ms", "1", "--seed",
            std::to_string(seed++)}));
    }
    ServerProcess server(house.config());
    const ProgramResult played = run_program(probe_player(dir, 12), 120s);
    BOOST_REQUIRE_MESSAGE(played.status == 0, played.err);
    wait_until_rooms_heard(house);
    const ProgramResult sources = run_tool("audioctl", {"list", "sources"});
    BOOST_TEST_MESSAGE(sources.out);
    BOOST_REQUIRE_EQUAL(server.stop(SIGTERM), 0);
    uint64_t dropped = 0;
    for (auto& relay : relays) {
        ::kill(relay->pid(), SIGTERM);
        const ProgramResult r = relay->finish(10s);
        dropped += json_number(r.out, "dropped").value_or(0);
        BOOST_TEST_MESSAGE(r.out);
    }
    BOOST_CHECK_GT(dropped, 0u); // the network did lose packets

    const std::string out = house.measure(5);
    for (const auto& [name, ppm] : house.rooms) {
        const std::string line = json_line(out, "{\"room\":\"" + name + "\"");
        BOOST_TEST_MESSAGE(line);
        BOOST_CHECK_MESSAGE(line.find("\"heard\":true") != std::string::npos, line);
        // A concealed packet keeps its place, and the index goes on after
        // it; the measure cannot always tell a concealment's fades from a
        // step, so a room may show steps, but never more than the packets
        // its receiver concealed.
        const size_t at = sources.out.find("rx-" + name + ":");
        const auto lost = json_number(
            "{\"lost\":" + sources.out.substr(sources.out.find("lost=", at) + 5), "lost");
        BOOST_REQUIRE(at != std::string::npos && lost);
        BOOST_CHECK_MESSAGE(json_number(line, "discontinuities").value_or(999) <= *lost,
                            line << " with " << *lost << " packets concealed");
    }
    check_pairs_in_step(out, 500);
}

// A room whose receiver goes away mid-stream (unloaded) and comes back
// (loaded again) is in step with the other again within 5 s, and stays
// within 100 µs of it.
BOOST_AUTO_TEST_CASE(a_receiver_restarted_mid_stream_is_back_in_step_within_5_s) {
    check_in_step_after([](const House& house, uint32_t) {
        ctl_ok({"unload-source", "rx-hall"});
        ctl_with_options({"load-source", "rtp", "rx-hall"}, house.receiver_options("hall"));
    });
}

// The sender goes away mid-stream and comes back (a new SSRC, a new RTP
// timeline): once its first reports are in, the rooms are in step again.
// `audioctl watch` says each room fell out of step and came back.
BOOST_AUTO_TEST_CASE(a_sender_restarted_mid_stream_keeps_the_rooms_in_step) {
    std::unique_ptr<BackgroundProgram> watch;
    check_in_step_after([&](const House& house, uint32_t player) {
        const auto room_stream = [](const char* room) {
            return std::to_string(source_number("rx-" + std::string(room), "play-stream"));
        };
        watch =
            std::make_unique<BackgroundProgram>(std::vector<std::string>{bin("audioctl"), "watch"});
        wait_until_watching(*watch);
        ctl_ok({"unload-sink", "net"});
        ctl_with_options({"load-sink", "rtp", "net"}, house.sender_options());
        // The player's stream comes back to it.
        BOOST_REQUIRE(eventually([&] { return stream_field(player, "device") == "net"; }, 10s));
        for (const char* room : {"kitchen", "hall"}) {
            const std::string stream = "stream=" + room_stream(room) + " ";
            BOOST_CHECK_MESSAGE(
                eventually(
                    [&] {
                        const std::string out = watch->output_so_far();
                        const size_t lost = out.find("stream-out-of-step " + stream);
                        return lost != std::string::npos &&
                               out.find("stream-in-step " + stream, lost) != std::string::npos;
                    },
                    30s),
                watch->output_so_far());
        }
    });
}

BOOST_AUTO_TEST_SUITE_END()
