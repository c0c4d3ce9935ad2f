// Groups ([groups.NAME]): a sink on the sender whose stream every room
// plays in step, this machine's own sinks (local members) too, each
// member's delay trim, and a stream moved into the group and back while
// it plays, losing no sample and playing none twice; and what the sender
// asks of its rooms.
#include "house.h"

#include <boost/test/unit_test.hpp>

#include <algorithm>
#include <cmath>
#include <csignal>
#include <cstdlib>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

using namespace audiod;
using namespace audiod::test;
using namespace std::chrono_literals;

namespace {

// "missing_runs":[[A,B],...] of audiod-sync-probe coverage's line.
std::vector<std::pair<uint64_t, uint64_t>> missing_runs(const std::string& line) {
    std::vector<std::pair<uint64_t, uint64_t>> runs;
    const std::string key = "\"missing_runs\":[";
    size_t at = line.find(key);
    if (at == std::string::npos) {
        return runs;
    }
    at += key.size();
    while (at < line.size() && line[at] == '[') {
        char* end = nullptr;
        const uint64_t first = std::strtoull(line.c_str() + at + 1, &end, 10);
        const uint64_t last = std::strtoull(end + 1, &end, 10);
        runs.emplace_back(first, last);
        at = static_cast<size_t>(end - line.c_str()) + 1; // past ']'
        if (at < line.size() && line[at] == ',') {
            ++at;
        }
    }
    return runs;
}

} // namespace

BOOST_AUTO_TEST_SUITE(groups)

// The group `net` sends to three rooms (clocks -100, +100 and 0 ppm) and
// plays on two sinks of its own: `desk` (+50 ppm), in step with the rooms
// within 100 µs, and `tv`, whose sound comes out 40 ms late (delay-ms =
// 40), played that much earlier; so is the room `porch`, by its
// receiver's delay-ms = 25.
//
// The sender asks three more rooms for settings (group-room), sent with its
// reports: loft for a 30 ms trim (played that much earlier, as porch by its
// own), attic for half the volume, cellar to be muted.
BOOST_AUTO_TEST_CASE(local_members_play_in_step_with_the_rooms_and_a_trim_plays_earlier) {
    TempDir dir;
    House house(
        dir,
        {{"kitchen", -100}, {"hall", 100}, {"porch", 0}, {"loft", 0}, {"attic", 0}, {"cellar", 0}},
        "l24");
    house.local = {{"desk", 50, 0}, {"tv", 0, 40}};
    house.delays["porch"] = 25;
    for (const auto& [room, ppm] : house.rooms) {
        house.receiver_extra[room] = "member-name=" + room;
    }
    ServerProcess server(house.config());
    ctl_ok({"group-room", "net", "loft", "delay-ms=30"});
    ctl_ok({"group-room", "net", "attic", "volume=50%"});
    ctl_ok({"group-room", "net", "cellar", "mute=on"});
    // The rooms take them with the sender's next report, before the probe.
    for (const auto& [source, key, value] : {std::tuple{"rx-loft", "sender-delay-ms", "30"},
                                             std::tuple{"rx-attic", "sender-gain", "0.5"},
                                             std::tuple{"rx-cellar", "sender-gain", "0"}}) {
        BOOST_REQUIRE_MESSAGE(eventually([&] { return source_field(source, key) == value; }, 20s),
                              run_tool("audioctl", {"list", "sources"}).out +
                                  run_tool("audioctl", {"list", "sinks"}).out);
    }
    const ProgramResult played = run_program(probe_player(dir, 12), 120s);
    BOOST_REQUIRE_MESSAGE(played.status == 0, played.err);
    wait_until_rooms_heard(house);
    // The sender lists its local members, and each room as its receiver
    // reports it: timed by the sender's reports, its error small.
    const ProgramResult groups = run_tool("audioctl", {"list", "groups"});
    BOOST_TEST_MESSAGE(groups.out);
    BOOST_CHECK_EQUAL(groups.status, 0);
    BOOST_CHECK_NE(groups.out.find("desk"), std::string::npos);
    BOOST_CHECK_EQUAL(group_member_field("net", "desk", "state"), "in-step");
    for (const auto& [room, ppm] : house.rooms) {
        BOOST_CHECK_MESSAGE(group_room_field("net", room, "timed") == "yes", groups.out);
        BOOST_CHECK_EQUAL(group_room_field("net", room, "clock-source"), "rtcp");
        const std::string error = group_room_field("net", room, "sync-error-us");
        BOOST_CHECK_MESSAGE(!error.empty() && std::fabs(std::stod(error)) < 100, groups.out);
    }
    BOOST_CHECK_EQUAL(group_room_field("net", "porch", "delay-ms"), "25");
    BOOST_CHECK_EQUAL(group_room_field("net", "loft", "delay-ms"), "30"); // as it reports
    BOOST_CHECK_EQUAL(group_room_field("net", "attic", "asked-volume"), "0.5");
    BOOST_CHECK_EQUAL(group_room_field("net", "cellar", "asked-mute"), "yes");

    const auto refused = [](const std::vector<std::string>& args, const std::string& reason) {
        const ProgramResult r = run_tool("audioctl", args);
        BOOST_CHECK_EQUAL(r.status, 1);
        BOOST_CHECK_MESSAGE(r.err.find(reason) != std::string::npos, r.err);
    };
    refused({"group-room", "net", "nobody", "reset"}, "nothing was asked of room 'nobody'");
    refused({"group-room", "spare", "attic", "mute=on"}, "no group named 'spare'");
    refused({"group-room", "net", "two words", "mute=on"}, "is not a room's name");
    // Let go, the cellar has its own settings again.
    ctl_ok({"group-room", "net", "cellar", "reset"});
    BOOST_CHECK(eventually([] { return source_field("rx-cellar", "sender-gain").empty(); }, 20s));
    BOOST_REQUIRE_EQUAL(server.stop(SIGTERM), 0);

    // Attic at half the level of porch, a room of the same clock at its
    // own volume, by the probe's ramp (channel 2, even from -1 to 1: the
    // median of its size is half its height), which a resampler keeps.
    // (The noise bursts' level moves with the resampler's phase: a room at
    // unity read 0.21-0.24 where another read 0.24-0.28, which once put
    // the two 0.419 apart; and a peak is where the ramp wraps and rings.)
    const auto ramp_level = [&](const std::string& room) {
        const std::vector<float> samples = read_wav_f32(dir.file(room + ".wav"));
        std::vector<float> sizes;
        for (size_t i = 1; i < samples.size(); i += 2) {
            if (samples[i] != 0.0f) {
                sizes.push_back(std::fabs(samples[i]));
            }
        }
        if (sizes.empty()) {
            return 0.0;
        }
        std::nth_element(sizes.begin(), sizes.begin() + sizes.size() / 2, sizes.end());
        return double{sizes[sizes.size() / 2]};
    };
    BOOST_REQUIRE_GT(ramp_level("porch"), 0.4);
    BOOST_CHECK_CLOSE(ramp_level("attic") / ramp_level("porch"), 0.5, 1.0);
    const std::vector<float> cellar = read_wav_f32(dir.file("cellar.wav"));
    BOOST_CHECK(std::all_of(cellar.begin(), cellar.end(), [](float x) { return x == 0.0f; }));

    const std::string out = house.measure(5);
    for (const char* name : {"kitchen", "hall", "porch", "loft", "desk", "tv"}) {
        const std::string line = json_line(out, "{\"room\":\"" + std::string(name) + "\"");
        BOOST_TEST_MESSAGE(line);
        BOOST_CHECK_MESSAGE(line.find("\"heard\":true") != std::string::npos, line);
        const uint64_t steps = json_number(line, "discontinuities").value_or(9);
        if (std::string(name) == "desk" || std::string(name) == "tv") {
            // Known, not yet understood (issue 41's note): now and then a
            // local member plays the first ~20 ms of a stream at once, then
            // re-aligns to the link offset. Allowed there, and nowhere else.
            const size_t to = line.find("\"steps_to\":[");
            const uint64_t first_step =
                to == std::string::npos ? 0 : std::strtoull(line.c_str() + to + 12, nullptr, 10);
            BOOST_CHECK_MESSAGE(steps == 0 || (steps == 1 && first_step < 4800), line);
        } else {
            BOOST_CHECK_MESSAGE(steps == 0, line);
        }
    }
    check_pairs_in_step(out, 500, {"kitchen-hall", "kitchen-desk", "hall-desk"});
    // tv plays each sample 40 ms before desk, porch 25 ms before kitchen:
    // Δ (desk − tv) is +40 ms, Δ (kitchen − porch) +25 ms.
    for (const auto& [pair, ms] : {std::pair{"desk-tv", 40}, std::pair{"kitchen-porch", 25},
                                   std::pair{"kitchen-loft", 30}}) {
        const std::string line = json_line(out, "{\"pair\":\"" + std::string(pair) + "\"");
        BOOST_TEST_MESSAGE(line);
        const auto mean = json_real(line, "mean_us");
        BOOST_REQUIRE_MESSAGE(mean, line);
        BOOST_CHECK_MESSAGE(std::abs(*mean - ms * 1000) <= 100, line);
    }
}

// A stream plays on `desk` (not a member), is moved into the group after
// 3 s and back after 4 s more: what desk and the room played holds every
// sample of the probe exactly once, and so does what desk and the group's
// local member `den` played.
BOOST_AUTO_TEST_CASE(a_stream_moved_into_the_group_and_back_plays_every_sample_once) {
    TempDir dir;
    House house(dir, {{"kitchen", -100}}, "l24");
    house.local = {{"den", 0, 0}};
    ServerProcess server(house.config(room_sink(dir, "desk", 100)));
    const double seconds = 12;
    BackgroundProgram player(probe_player(dir, seconds, true, "desk"));
    const auto id = wait_for_playing("audioplay", 30s, 3 * 48000);
    BOOST_REQUIRE_MESSAGE(id, player.errors_so_far());
    ctl_ok({"move-stream", std::to_string(*id), "net"});
    BOOST_REQUIRE(wait_for_more(*id, 4 * 48000, 60s));
    ctl_ok({"move-stream", std::to_string(*id), "desk"});
    BOOST_REQUIRE_EQUAL(player.finish(120s).status, 0);
    wait_until_rooms_heard(house);
    BOOST_REQUIRE_EQUAL(server.stop(SIGTERM), 0);

    const auto frames = static_cast<uint64_t>(seconds * 48000);
    const auto coverage = [&](const std::vector<std::string>& rooms) {
        std::vector<std::string> args = {"coverage", "--frames", std::to_string(frames)};
        for (const std::string& room : rooms) {
            args.push_back(room_measure(dir, room));
        }
        const ProgramResult counted = run_tool("audiod-sync-probe", args);
        BOOST_REQUIRE_MESSAGE(counted.status == 0, counted.err);
        BOOST_TEST_MESSAGE(counted.out);
        return counted.out;
    };
    // The room and the local member resample what they play (to follow
    // their clocks), which smears the step from the group's silence into
    // the probe, and back, over the interpolator's four taps: those
    // indices are there, but cannot be read. So at most two runs may be
    // missing, one at each move, of at most four frames each. Anything
    // else missing, or any index played twice, is a fault of the move.
    for (const char* member : {"kitchen", "den"}) {
        const std::string both = coverage({"desk", member});
        BOOST_CHECK_GE(json_number(both, "checked").value_or(0), frames - 300);
        const std::vector<std::pair<uint64_t, uint64_t>> runs = missing_runs(both);
        BOOST_CHECK_MESSAGE(runs.size() <= 2, both);
        for (const auto& [first, last] : runs) {
            BOOST_CHECK_MESSAGE(last - first + 1 <= 4, both);
        }
        BOOST_CHECK_MESSAGE(json_number(both, "repeated").value_or(1) == 0, both);
        BOOST_CHECK_MESSAGE(json_number(both, "outside").value_or(1) == 0, both);
    }
}

// At run time: a sink joins the group with a delay trim and leaves it,
// a group or a missing sink is refused, a member's stream cannot be moved
// away, a member sink unloaded and loaded again plays the group again,
// a group is made (group-create) and deleted, and a reload brings back
// the configured members and keeps the group made at run time.
BOOST_AUTO_TEST_CASE(members_join_and_leave_at_run_time_until_a_reload) {
    TempDir dir;
    House house(dir, {}, "l24");
    house.local = {{"desk", 0, 0}};
    ServerProcess server(house.config("[sinks.tv]\ntype = \"null\"\n"));
    const auto member_field = [](const std::string& member, const std::string& key) {
        return group_member_field("net", member, key);
    };
    BOOST_REQUIRE(eventually([&] { return member_field("desk", "state") == "in-step"; }, 30s));

    ctl_ok({"group-add", "net", "tv", "delay-ms=30"});
    BOOST_REQUIRE(eventually([&] { return member_field("tv", "state") == "in-step"; }, 30s));
    BOOST_CHECK_EQUAL(member_field("tv", "delay-ms"), "30");
    const ProgramResult listed = run_tool("audioctl", {"--json", "list", "groups"});
    BOOST_TEST_MESSAGE(listed.out);
    BOOST_CHECK_NE(listed.out.find("\"sink\":\"tv\""), std::string::npos);
    BOOST_CHECK_NE(listed.out.find("\"link-offset-ms\":150"), std::string::npos);

    const auto refused = [](const std::vector<std::string>& args, const std::string& reason) {
        const ProgramResult r = run_tool("audioctl", args);
        BOOST_CHECK_EQUAL(r.status, 1);
        BOOST_CHECK_MESSAGE(r.err.find(reason) != std::string::npos, r.err);
    };
    refused({"group-add", "net", "nowhere"}, "no sink named 'nowhere'");
    refused({"group-add", "spare", "tv"}, "no group named 'spare'");
    refused({"group-add", "net", "net"}, "is a group");
    refused({"group-add", "net", "tv", "delay-ms=140"}, "leaves less than 20 ms");
    const std::string stream = member_field("tv", "stream");
    refused({"move-stream", stream, "spare"}, "plays a group on its member 'tv'");

    ctl_ok({"group-remove", "net", "tv"});
    BOOST_CHECK(member_field("tv", "state").empty());
    BOOST_CHECK(eventually([&] { return stream_field(std::stoul(stream), "id").empty(); }, 10s));
    refused({"group-remove", "net", "tv"}, "not a local member");

    // The member sink goes and comes back: it plays the group again.
    ctl_ok({"unload-sink", "desk"});
    BOOST_CHECK(eventually([&] { return member_field("desk", "state") == "absent"; }, 10s));
    ctl_ok({"load-sink", "null", "desk"});
    BOOST_CHECK(eventually([&] { return member_field("desk", "state") == "in-step"; }, 30s));

    // A group made at run time, with a member of its own.
    ctl_ok({"group-create", "party", "destination=" + house.group,
            "port=" + std::to_string(free_udp_port_pair()), "payload=l24", "link-offset-ms=120"});
    ctl_ok({"group-add", "party", "tv", "delay-ms=10"});
    const auto party_field = [](const std::string& key) {
        return group_member_field("party", "tv", key);
    };
    BOOST_CHECK(eventually([&] { return party_field("state") == "in-step"; }, 30s));
    BOOST_CHECK_NE(
        run_tool("audioctl", {"--json", "list", "groups"}).out.find("\"link-offset-ms\":120"),
        std::string::npos);
    refused({"group-create", "party", "destination=" + house.group}, "already");
    refused({"group-create", "brief", "link-offset-ms=5"}, "link-offset-ms: '5'");
    refused({"group-create", "brief", "local=tv"}, "add members with group-add");
    refused({"group-delete", "spare"}, "no group named 'spare'");

    // A reload: the configured members again; the group made at run time
    // stays as it is.
    ctl_ok({"group-add", "net", "tv"});
    ctl_ok({"reload"});
    BOOST_CHECK(eventually([&] { return member_field("tv", "state").empty(); }, 10s));
    BOOST_CHECK(eventually([&] { return member_field("desk", "state") == "in-step"; }, 30s));
    BOOST_CHECK_EQUAL(party_field("state"), "in-step");
    BOOST_CHECK_EQUAL(party_field("delay-ms"), "10");

    ctl_ok({"group-delete", "party"});
    BOOST_CHECK(sink_field("party", "state").empty());
    BOOST_CHECK_EQUAL(run_tool("audioctl", {"list", "groups"}).out.find("party"),
                      std::string::npos);
    BOOST_CHECK_EQUAL(server.stop(SIGTERM), 0);
}

BOOST_AUTO_TEST_SUITE_END()
