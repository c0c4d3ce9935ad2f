// A system-wide server (audiod --system) shared by several users: the socket
// is the access group's, and each user sees and controls only their own
// clients, streams and application settings, while what is shared needs an
// admin. The users are real: clients run under other uids through setpriv,
// and the server tells them apart by SO_PEERCRED, as it would in use.
#include "helpers.h"

#include <boost/test/unit_test.hpp>

#include <csignal>
#include <fstream>
#include <grp.h>
#include <sstream>
#include <sys/stat.h>
#include <unistd.h>

using namespace audiod;
using namespace audiod::test;
using namespace std::chrono_literals;

namespace {

constexpr uid_t kAlice = 41101;
constexpr uid_t kBob = 41102;
constexpr uid_t kMallory = 41103; // not in the access group

gid_t audio_gid() {
    const group* audio = ::getgrnam("audio");
    BOOST_REQUIRE_MESSAGE(audio != nullptr, "this test needs the group 'audio' (Debian has it)");
    return audio->gr_gid;
}

// argv run as `uid`, in the audio group unless `in_group` is false.
std::vector<std::string> as_user(uid_t uid, bool in_group, std::vector<std::string> argv) {
    std::vector<std::string> out = {installed("setpriv"), "--reuid=" + std::to_string(uid),
                                    "--regid=" + std::to_string(uid)};
    out.push_back(in_group ? "--groups=" + std::to_string(audio_gid()) : "--clear-groups");
    out.insert(out.end(), argv.begin(), argv.end());
    return out;
}

ProgramResult ctl_as(uid_t uid, const std::vector<std::string>& args, bool in_group = true) {
    std::vector<std::string> argv = {bin("audioctl"), "--timeout", "10000"};
    argv.insert(argv.end(), args.begin(), args.end());
    return run_program(as_user(uid, in_group, argv), 30s);
}

// A client of `uid` playing a constant as application "player" for up to a
// minute (the test kills it when done).
std::unique_ptr<BackgroundProgram> player_of(uid_t uid, int value) {
    return std::make_unique<BackgroundProgram>(
        as_user(uid, true,
                {bin("audiod-test-client"), "--signal", "constant", "--value",
                 std::to_string(value), "--frames", "2880000", "--app", "player"}));
}

std::optional<uint32_t> id_in(const std::string& json) {
    return json_number(json, "id");
}

// What sends a libpulse program of any user to the pulse socket
// `pulse_socket`: files in `dir` that every user can read, and no
// PulseAudio of its own ever started.
std::map<std::string, std::string> everyones_pulse_env(const TempDir& dir,
                                                       const std::string& pulse_socket) {
    std::ofstream(dir.file("client.conf")) << "autospawn = no\n";
    std::ofstream(dir.file("cookie")) << std::string(256, 'c');
    ::chmod(dir.file("client.conf").c_str(), 0644);
    ::chmod(dir.file("cookie").c_str(), 0644);
    return {{"PULSE_SERVER", "unix:" + pulse_socket},
            {"PULSE_CLIENTCONFIG", dir.file("client.conf")},
            {"PULSE_COOKIE", dir.file("cookie")}};
}

ProgramResult pactl_as(uid_t uid, const std::map<std::string, std::string>& env,
                       const std::vector<std::string>& args, bool in_group = true) {
    std::vector<std::string> argv = {installed("pactl")};
    argv.insert(argv.end(), args.begin(), args.end());
    return run_program(as_user(uid, in_group, argv), 30s, env);
}

// The sink inputs in `pactl list sink-inputs short`'s output.
std::vector<uint32_t> sink_inputs(const std::string& listed) {
    std::vector<uint32_t> ids;
    std::istringstream lines(listed);
    for (std::string line; std::getline(lines, line);) {
        if (!line.empty()) {
            ids.push_back(static_cast<uint32_t>(std::stoul(line)));
        }
    }
    return ids;
}

} // namespace

BOOST_AUTO_TEST_SUITE(system_wide)

BOOST_AUTO_TEST_CASE(users_of_a_system_server_are_kept_apart_and_shared_things_need_an_admin) {
    BOOST_REQUIRE_MESSAGE(::geteuid() == 0,
                          "this test runs clients as other users (setpriv) and needs root; CI "
                          "runs as root");
    TempDir dir;
    ::chmod(dir.path().c_str(), 0755); // the users reach the socket inside
    const std::string socket = dir.file("socket");
    {
        std::ofstream(dir.file("audiod.conf"))
            << file_sink_config(dir.file("out.wav")) << "\n[sinks.other]\ntype = \"null\"\n";
    }
    ::setenv("AUDIOD_SOCKET", socket.c_str(), 1);
    BackgroundProgram server({bin("audiod"), "--system", "--group", "audio", "--socket", socket,
                              "--config", dir.file("audiod.conf"), "--state", dir.file("state")});
    BOOST_REQUIRE_MESSAGE(wait_for_socket(socket, 20s), server.output_so_far());
    struct stat st {};
    BOOST_REQUIRE(::stat(socket.c_str(), &st) == 0);
    BOOST_CHECK_EQUAL(st.st_mode & 0777, 0660u);
    BOOST_CHECK_EQUAL(st.st_gid, audio_gid());

    // Outside the group: not even a connection.
    const ProgramResult outsider = ctl_as(kMallory, {"info"}, false);
    BOOST_CHECK_EQUAL(outsider.status, 1);
    BOOST_CHECK_MESSAGE(outsider.err.find("permission denied") != std::string::npos, outsider.err);

    auto alice = player_of(kAlice, 8000);
    auto bob = player_of(kBob, 1000);
    BOOST_REQUIRE(eventually(
        [] {
            return run_tool("audioctl", {"--json", "list", "streams"}).out.find("41102/player") !=
                       std::string::npos &&
                   run_tool("audioctl", {"--json", "list", "streams"}).out.find("41101/player") !=
                       std::string::npos;
        },
        30s));

    // Each sees their own stream, under the name they gave it.
    const ProgramResult alice_sees = ctl_as(kAlice, {"--json", "list", "streams"});
    BOOST_REQUIRE_MESSAGE(alice_sees.status == 0, alice_sees.err);
    BOOST_CHECK_MESSAGE(alice_sees.out.find("\"app\":\"player\"") != std::string::npos &&
                            alice_sees.out.find("41102") == std::string::npos,
                        alice_sees.out);
    const auto alice_id = id_in(alice_sees.out);
    const auto bob_id = id_in(ctl_as(kBob, {"--json", "list", "streams"}).out);
    BOOST_REQUIRE(alice_id && bob_id && *alice_id != *bob_id);
    const ProgramResult clients = ctl_as(kAlice, {"--json", "list", "clients"});
    BOOST_CHECK_MESSAGE(clients.out.find("\"app\":\"player\"") != std::string::npos &&
                            clients.out.find("\"app\":\"audioctl\"") != std::string::npos &&
                            std::count(clients.out.begin(), clients.out.end(), '{') == 2,
                        clients.out); // her player and this audioctl only

    // Another user's stream: refused, clearly.
    for (const std::vector<std::string>& args :
         std::vector<std::vector<std::string>>{{"set-volume", std::to_string(*bob_id), "10%"},
                                               {"mute", std::to_string(*bob_id)},
                                               {"move-stream", std::to_string(*bob_id), "other"}}) {
        const ProgramResult r = ctl_as(kAlice, args);
        BOOST_CHECK_EQUAL(r.status, 1);
        BOOST_CHECK_MESSAGE(r.err.find("stream " + std::to_string(*bob_id) +
                                       " belongs to another user") != std::string::npos,
                            args[0] << ": " << r.err);
    }
    // Nor can she end his player.
    const auto bob_client = json_number(ctl_as(kBob, {"--json", "list", "clients"}).out, "id");
    BOOST_REQUIRE(bob_client);
    const ProgramResult kill = ctl_as(kAlice, {"kill-client", std::to_string(*bob_client)});
    BOOST_CHECK_EQUAL(kill.status, 1);
    BOOST_CHECK_MESSAGE(kill.err.find("client " + std::to_string(*bob_client) +
                                      " belongs to another user") != std::string::npos,
                        kill.err);
    // Her own: fine; and app:player is hers alone.
    BOOST_CHECK_EQUAL(ctl_as(kAlice, {"move-stream", std::to_string(*alice_id), "other"}).status,
                      0);
    BOOST_CHECK_EQUAL(ctl_as(kAlice, {"move-stream", std::to_string(*alice_id), "out"}).status, 0);
    BOOST_CHECK_EQUAL(ctl_as(kAlice, {"set-volume", "app:player", "50%"}).status, 0);
    const ProgramResult apps = run_tool("audioctl", {"--json", "list", "apps"}); // root sees all
    const auto alice_app = apps.out.find("\"name\":\"41101/player\",\"volume\":0.5");
    const auto bob_app = apps.out.find("\"name\":\"41102/player\",\"volume\":1,");
    BOOST_CHECK_MESSAGE(alice_app != std::string::npos && bob_app != std::string::npos, apps.out);
    const ProgramResult bob_apps = ctl_as(kBob, {"--json", "list", "apps"});
    BOOST_CHECK_MESSAGE(bob_apps.out.find("\"name\":\"player\",\"volume\":1,") !=
                                std::string::npos &&
                            bob_apps.out.find("41101") == std::string::npos,
                        bob_apps.out);

    // What is shared needs an admin.
    for (const std::vector<std::string>& args :
         std::vector<std::vector<std::string>>{{"set-volume", "sink:out", "10%"},
                                               {"load-sink", "null", "mine"},
                                               {"unload-sink", "other"},
                                               {"set-default-sink", "other"},
                                               {"reload"}}) {
        const ProgramResult r = ctl_as(kBob, args);
        BOOST_CHECK_EQUAL(r.status, 1);
        BOOST_CHECK_MESSAGE(r.err.find("is for admins of this shared server") != std::string::npos,
                            args[0] << ": " << r.err);
    }
    BOOST_CHECK_EQUAL(run_tool("audioctl", {"set-volume", "sink:other", "90%"}).status, 0);

    // A greedy user is refused shared memory; the other plays on.
    const ProgramResult greedy =
        run_program(as_user(kBob, true, {bin("audiod-evil-client"), "greedy"}), 60s);
    BOOST_CHECK_MESSAGE(greedy.status == 0 &&
                            greedy.out.find("past its shared-memory limit") != std::string::npos,
                        greedy.out << greedy.err);
    BOOST_CHECK(wait_for_more(*alice_id, 24000));

    // What came out: alice's stream at half, bob's untouched, mixed.
    ::kill(alice->pid(), SIGTERM);
    ::kill(bob->pid(), SIGTERM);
    alice->finish(30s);
    bob->finish(30s);
    ::kill(server.pid(), SIGTERM);
    BOOST_CHECK_EQUAL(server.finish(30s).status, 0);
    const auto out = read_wav_s16(dir.file("out.wav"));
    BOOST_CHECK_GT(std::count(out.begin(), out.end(), int16_t{5000}), 2 * 4800); // 4000 + 1000
}

// The same server's PulseAudio-protocol socket: libpulse programs of each
// user are kept apart as libaudiod ones are, by the same rules.
BOOST_AUTO_TEST_CASE(pulse_clients_of_a_system_server_are_kept_apart_by_the_same_rules) {
    BOOST_REQUIRE_MESSAGE(::geteuid() == 0, "this test runs clients as other users (setpriv)");
    TempDir dir;
    ::chmod(dir.path().c_str(), 0755);
    const std::string socket = dir.file("socket");
    const std::string pulse = dir.file("pulse/native");
    {
        std::ofstream(dir.file("audiod.conf"))
            << "[server]\nrt-priority = 0\n[sinks.out]\ntype = \"null\"\n[sinks.other]\n"
               "type = \"null\"\n[pulse]\nsocket = \""
            << pulse << "\"\n";
    }
    ::setenv("AUDIOD_SOCKET", socket.c_str(), 1);
    BackgroundProgram server({bin("audiod"), "--system", "--group", "audio", "--socket", socket,
                              "--config", dir.file("audiod.conf"), "--state", dir.file("state")});
    BOOST_REQUIRE_MESSAGE(
        eventually(
            [&] { return server.errors_so_far().find("pulse: listening") != std::string::npos; },
            20s),
        server.errors_so_far());
    struct stat st {};
    BOOST_REQUIRE(::stat(pulse.c_str(), &st) == 0);
    BOOST_CHECK_EQUAL(st.st_mode & 0777, 0660u);
    BOOST_CHECK_EQUAL(st.st_gid, audio_gid());
    BOOST_REQUIRE(::stat(dir.file("pulse").c_str(), &st) == 0);
    BOOST_CHECK_EQUAL(st.st_mode & 0777, 0755u);
    const auto env = everyones_pulse_env(dir, pulse);

    const ProgramResult outsider = pactl_as(kMallory, env, {"info"}, false);
    BOOST_CHECK_NE(outsider.status, 0);
    BOOST_CHECK_MESSAGE(outsider.err.find("refused") != std::string::npos, outsider.err);

    const auto player = [&](uid_t uid) {
        return std::make_unique<BackgroundProgram>(
            as_user(uid, true, {installed("pacat"), "--raw", "/dev/zero"}), env);
    };
    auto alice = player(kAlice);
    auto bob = player(kBob);
    BOOST_REQUIRE_MESSAGE(
        eventually(
            [&] {
                return sink_inputs(pactl_as(0, env, {"list", "short", "sink-inputs"}).out).size() ==
                       2;
            },
            30s),
        alice->errors_so_far() << bob->errors_so_far() << server.errors_so_far());
    const auto alice_sees =
        sink_inputs(pactl_as(kAlice, env, {"list", "short", "sink-inputs"}).out);
    const auto bob_sees = sink_inputs(pactl_as(kBob, env, {"list", "short", "sink-inputs"}).out);
    BOOST_REQUIRE_EQUAL(alice_sees.size(), 1u);
    BOOST_REQUIRE_EQUAL(bob_sees.size(), 1u);
    const std::string hers = std::to_string(alice_sees[0]);
    const std::string his = std::to_string(bob_sees[0]);
    BOOST_REQUIRE_NE(hers, his);
    // Her pacat and this pactl; root sees bob's pacat too.
    BOOST_CHECK_EQUAL(sink_inputs(pactl_as(kAlice, env, {"list", "short", "clients"}).out).size(),
                      2u);
    BOOST_CHECK_EQUAL(sink_inputs(pactl_as(0, env, {"list", "short", "clients"}).out).size(), 3u);

    // Alice hears of her own streams' changes only.
    BackgroundProgram watch(as_user(kAlice, true, {installed("pactl"), "subscribe"}), env);
    BOOST_REQUIRE(eventually(
        [&] {
            (void)pactl_as(kBob, env, {"set-sink-input-volume", his, "90%"});
            (void)pactl_as(kAlice, env, {"set-sink-input-volume", hers, "50%"});
            return watch.output_so_far().find("sink-input #" + hers) != std::string::npos;
        },
        30s));
    BOOST_CHECK_MESSAGE(watch.output_so_far().find("sink-input #" + his + "\n") ==
                            std::string::npos,
                        watch.output_so_far());

    // Bob's stream and what is shared: refused.
    for (const std::vector<std::string>& args :
         std::vector<std::vector<std::string>>{{"move-sink-input", his, "other"},
                                               {"set-sink-input-mute", his, "1"},
                                               {"set-sink-volume", "out", "10%"},
                                               {"set-default-sink", "other"},
                                               {"load-module", "module-null-sink"}}) {
        const ProgramResult r = pactl_as(kAlice, env, args);
        BOOST_CHECK_EQUAL(r.status, 1);
        BOOST_CHECK_MESSAGE(r.err.find("Access denied") != std::string::npos,
                            args[0] << ": " << r.err);
    }
    const ProgramResult kill = run_program(
        as_user(kAlice, true, {bin("audiod-pulse-client"), "kill-sink-input", his}), 30s, env);
    BOOST_CHECK_MESSAGE(kill.status == 1 && kill.err.find("Access denied") != std::string::npos,
                        kill.out << kill.err);
    const ProgramResult ctl_his = ctl_as(kAlice, {"set-volume", his, "10%"});
    BOOST_CHECK_MESSAGE(ctl_his.err.find("belongs to another user") != std::string::npos,
                        ctl_his.err);

    // Her own, through either door; and root may change what is shared.
    BOOST_CHECK_EQUAL(pactl_as(kAlice, env, {"move-sink-input", hers, "other"}).status, 0);
    const ProgramResult ctl_hers = ctl_as(kAlice, {"set-volume", hers, "40%"});
    BOOST_CHECK_MESSAGE(ctl_hers.status == 0, ctl_hers.err);
    BOOST_CHECK_MESSAGE(
        ctl_as(kAlice, {"--json", "list", "streams"}).out.find("\"app\":\"pacat\"") !=
            std::string::npos,
        "alice's pulse stream is not hers in audioctl");
    BOOST_CHECK_EQUAL(pactl_as(0, env, {"set-sink-volume", "out", "50%"}).status, 0);

    // stream-restore: her application's volume is hers alone.
    const ProgramResult wrote =
        run_program(as_user(kAlice, true,
                            {bin("audiod-pulse-client"), "restore-write",
                             "sink-input-by-application-name:pacat", "30", "0"}),
                    30s, env);
    BOOST_CHECK_MESSAGE(wrote.status == 0, wrote.err);
    const ProgramResult apps = run_tool("audioctl", {"--json", "list", "apps"});
    BOOST_CHECK_MESSAGE(apps.out.find("\"name\":\"41101/pacat\"") != std::string::npos, apps.out);
    const ProgramResult bob_reads =
        run_program(as_user(kBob, true, {bin("audiod-pulse-client"), "restore-read"}), 30s, env);
    BOOST_CHECK_MESSAGE(bob_reads.status == 0 &&
                            bob_reads.out.find("volume=30") == std::string::npos,
                        bob_reads.out << bob_reads.err);
    const ProgramResult alice_reads =
        run_program(as_user(kAlice, true, {bin("audiod-pulse-client"), "restore-read"}), 30s, env);
    BOOST_CHECK_MESSAGE(alice_reads.out.find("sink-input-by-application-name:pacat volume=30") !=
                            std::string::npos,
                        alice_reads.out << alice_reads.err);

    // So is an entry of another kind that she wrote (kept, as written).
    const ProgramResult role = run_program(as_user(kAlice, true,
                                                   {bin("audiod-pulse-client"), "restore-write",
                                                    "sink-input-by-media-role:event", "20", "0"}),
                                           30s, env);
    BOOST_CHECK_MESSAGE(role.status == 0, role.err);
    const auto reads = [&](uid_t uid) {
        return run_program(as_user(uid, true, {bin("audiod-pulse-client"), "restore-read"}), 30s,
                           env)
            .out;
    };
    BOOST_CHECK_NE(reads(kAlice).find("media-role:event"), std::string::npos);
    BOOST_CHECK_EQUAL(reads(kBob).find("media-role:event"), std::string::npos);

    // The sample cache: her "bell" is hers; his "bell" is another.
    write_tone_wav(dir.file("bell.wav"), 48000, 880, 0.1);
    ::chmod(dir.file("bell.wav").c_str(), 0644);
    BOOST_REQUIRE_EQUAL(
        pactl_as(kAlice, env, {"upload-sample", dir.file("bell.wav"), "bell"}).status, 0);
    BOOST_CHECK_NE(pactl_as(kAlice, env, {"list", "short", "samples"}).out.find("bell"),
                   std::string::npos);
    BOOST_CHECK_EQUAL(pactl_as(kBob, env, {"list", "short", "samples"}).out.find("bell"),
                      std::string::npos);
    for (const std::vector<std::string>& args : std::vector<std::vector<std::string>>{
             {"play-sample", "bell"}, {"remove-sample", "bell"}}) {
        const ProgramResult r = pactl_as(kBob, env, args);
        BOOST_CHECK_MESSAGE(r.status == 1 && r.err.find("No such entity") != std::string::npos,
                            args[0] << ": " << r.err);
    }
    BOOST_CHECK_EQUAL(pactl_as(kAlice, env, {"play-sample", "bell"}).status, 0);

    ::kill(watch.pid(), SIGTERM);
    ::kill(alice->pid(), SIGTERM);
    ::kill(bob->pid(), SIGTERM);
    watch.finish(30s);
    alice->finish(30s);
    bob->finish(30s);
    ::kill(server.pid(), SIGTERM);
    BOOST_CHECK_EQUAL(server.finish(30s).status, 0);
    BOOST_CHECK_MESSAGE(::access(pulse.c_str(), F_OK) != 0, "the pulse socket outlived audiod");
}

BOOST_AUTO_TEST_SUITE_END()
