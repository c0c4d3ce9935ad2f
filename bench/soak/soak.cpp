// audiod-soak: everything at once, for as long as asked, and proof that
// every surviving sample arrived (issue 42; bench/soak/README.md).
//
// One server with sinks of different quanta and clocks; players (libaudiod
// ones, and aplay through the ALSA plugin) each playing a numbered stream
// (tests/support/numbered_frames.h); every
// sink's monitor recorded and read into a ledger (stream_ledger.h). Every
// second a seeded event: a stream moved to a free sink, a stream's, an
// application's or a sink's volume changed or muted for a while, a
// player stopped (SIGSTOP) for a while, a player killed and another
// started, the server held (SIGSTOP) for up to 2 s; a minute in and every
// three minutes after, the server killed and started again on the socket
// this program holds (socket activation). The server's descriptors,
// threads and memory are sampled as it goes. At the end: every sample of every stream arrived once,
// in order, gaps only where an event explains them; nothing leaked.
//
//   audiod-soak [--minutes N] [--seed S] [--streams N] [--bin DIR] [--keep DIR]
#include "processes.h"
#include "recorder.h"
#include "support/numbered_frames.h"
#include "support/stream_ledger.h"

#include <algorithm>
#include <array>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <random>
#include <sstream>
#include <string>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>
#include <vector>

namespace {

using audiod::soak::Footprint;
using audiod::soak::Recorder;
using audiod::test::Cause;
using audiod::test::Run;
using Clock = std::chrono::steady_clock;

struct Options {
    double minutes = 60;
    uint32_t seed = 1;
    int streams = 24;
    std::string bin;
    std::string keep;
    std::string preload; // LD_PRELOAD for aplay (a sanitizer build's plugin)
};

const char* const kUsage =
    "Usage: audiod-soak [--minutes N] [--seed S] [--streams N] [--bin DIR] [--keep DIR]\n"
    "                   [--preload LIBS]\n"
    "Run an audiod under a seeded storm of events for N minutes and check that\n"
    "every sample of every stream arrived once and in order.\n"
    "\n"
    "  --minutes N   how long (default 60; fractions allowed)\n"
    "  --seed S      the events' seed (default 1): the same seed, the same events\n"
    "  --streams N   players at once, 1..28 (default 24)\n"
    "  --bin DIR     where audiod, audioctl and audiod-test-client are (default:\n"
    "                this program's directory)\n"
    "  --keep DIR    keep the server's configuration and log, the events and the\n"
    "                gaps in DIR\n"
    "  --preload LIBS  LD_PRELOAD for aplay, whose ALSA plugin comes from --bin's\n"
    "                build: a sanitizer build's needs its runtime (libasan.so.8)\n"
    "\n"
    "Prints a summary; exits 0 when every bound held, 1 when one did not, 2 on\n"
    "a usage error.\n";

std::optional<Options> parse(int argc, char** argv) {
    Options o;
    for (int i = 1; i < argc; ++i) {
        const std::string key = argv[i];
        if (key == "--help" || key == "-h") {
            std::fputs(kUsage, stdout);
            std::exit(0);
        }
        if (i + 1 >= argc) {
            std::fprintf(stderr, "audiod-soak: %s needs a value\n", key.c_str());
            return std::nullopt;
        }
        const std::string value = argv[++i];
        char* end = nullptr;
        if (key == "--minutes") {
            o.minutes = std::strtod(value.c_str(), &end);
            if (*end != '\0' || !(o.minutes > 0)) {
                std::fprintf(stderr, "audiod-soak: --minutes wants a positive number\n");
                return std::nullopt;
            }
        } else if (key == "--seed") {
            o.seed = static_cast<uint32_t>(std::strtoul(value.c_str(), &end, 10));
        } else if (key == "--streams") {
            o.streams = std::atoi(value.c_str());
            if (o.streams < 1 || o.streams > 28) {
                std::fprintf(stderr, "audiod-soak: --streams wants 1..28\n");
                return std::nullopt;
            }
        } else if (key == "--bin") {
            o.bin = value;
        } else if (key == "--keep") {
            o.keep = value;
        } else if (key == "--preload") {
            o.preload = value;
        } else {
            std::fprintf(stderr, "audiod-soak: unknown option %s\n%s", key.c_str(), kUsage);
            return std::nullopt;
        }
    }
    if (o.bin.empty()) {
        o.bin = std::filesystem::read_symlink("/proc/self/exe").parent_path().string();
    }
    return o;
}

// How a player reaches the server.
enum class Kind {
    libaudiod, // audiod-test-client
    aplay,     // aplay through the ALSA plugin
    pacat,     // pacat through the PulseAudio-protocol server
};

const char* kind_name(Kind kind) {
    return kind == Kind::aplay ? "aplay" : kind == Kind::pacat ? "pacat" : "libaudiod";
}

// A player: one life of a numbered stream (its number 1..31 is reused by
// later lives, long after this one ended).
struct Player {
    uint32_t number = 0;
    uint32_t life = 0; // unique: the ledger's key for this life
    pid_t pid = -1;
    std::string sink;
    std::string app;
    uint32_t stream_id = 0; // the server's, once listed
    double started_s = 0;
    double ended_s = -1; // killed (or the soak's end)
    bool stopped = false;
    Kind kind = Kind::libaudiod;
    pid_t feeder = -1; // what feeds aplay or pacat its frames
};

// A sample of the server's footprint: when, and which server (each
// restart starts afresh).
struct Sampled {
    double at_s;
    int server;
    Footprint footprint;
    std::map<std::string, int> descriptors; // by kind
    int pacats;                             // pacat players then: each holds a descriptor more
};

struct Sink {
    std::string name;
    int quantum;
    int ppm;
};

// A change to undo later (a volume back to unity, a player continued).
struct Pending {
    double at_s;
    std::function<void()> undo;
};

class Soak {
public:
    explicit Soak(Options options)
        : o_(std::move(options))
        , rng_(o_.seed) {}
    int run();

private:
    double now_s() const { return std::chrono::duration<double>(Clock::now() - start_).count(); }
    std::string tool(const std::string& name) const { return o_.bin + "/" + name; }
    bool audioctl(const std::vector<std::string>& args, std::string* out = nullptr);
    bool start_server();
    bool launch_server();
    void hold_server();
    void restart_server();
    void settle(double since, const std::string& why);
    void start_player(const std::string& sink, Kind kind);
    Kind next_kind();
    void reap_players();
    void end_player(Player& p);
    void find_stream_ids();
    std::string free_sink(bool at_unity = false);
    Player* random_player(bool listed, const std::function<bool(const Player&)>& also = {});
    // Whether a life's or a sink's gain is other than unity (ramps
    // included) at `t`: its frames then read only by count, and a run
    // cut by a move there could not be told from a loss, so moves wait.
    bool altered(const Player& p, double t) const;
    bool altered(const std::string& sink, double t) const;
    void event();
    void sample();
    int verdict();

    Options o_;
    std::mt19937 rng_;
    Clock::time_point start_ = Clock::now();
    std::string dir_;
    pid_t server_ = -1;
    int listener_ = -1;
    int players_log_fd_ = -1; // the players' standard error
    std::string self_ = std::filesystem::read_symlink("/proc/self/exe").string();
    std::vector<Sink> sinks_;
    std::vector<Player> players_; // every life, in order
    std::vector<double> last_end_of_number_ = std::vector<double>(32, -1e9);
    uint32_t lives_ = 0;
    std::vector<Pending> pending_;
    std::vector<Cause> causes_;
    std::map<std::string, int> events_;
    std::vector<std::pair<double, std::string>> journal_; // what was done, when
    void note(const std::string& what) { journal_.emplace_back(now_s(), what); }
    audiod::test::LatestNumbers latest_{};
    std::vector<std::unique_ptr<Recorder>> recorders_;
    std::vector<Sampled> footprints_;
    int server_lives_ = 1;
    std::map<uint32_t, double> life_altered_until_;
    double last_restart_s_ = -1e9;
    std::vector<std::string> player_failures_;
    std::map<std::string, double> sink_altered_until_;
    int failed_commands_ = 0;
    std::vector<std::string> refusals_; // the first few, for the summary
};

bool Soak::audioctl(const std::vector<std::string>& args, std::string* out) {
    std::vector<std::string> argv = {tool("audioctl")};
    argv.insert(argv.end(), args.begin(), args.end());
    std::string text;
    const int status = audiod::soak::run(argv, text, 10000);
    if (out != nullptr) {
        *out = text;
    }
    if (status != 0 && text.find("no stream with id") != std::string::npos) {
        // Made anew (after a stall) under another id: found again.
        for (Player& p : players_) {
            if (p.stream_id != 0 && args.size() > 1 && args[1] == std::to_string(p.stream_id)) {
                p.stream_id = 0;
            }
        }
    }
    if (status != 0 && ++failed_commands_ <= 5) {
        std::string line;
        for (const std::string& a : args) {
            line += " " + a;
        }
        refusals_.push_back(line + ": " + text.substr(0, text.find('\n')));
    }
    return status == 0;
}

bool Soak::start_server() {
    // Quanta from 64 to 1024 frames, clocks from 100 ppm slow to 100 fast:
    // moves cross both.
    const int quanta[] = {64, 128, 256, 512, 1024};
    const int ppms[] = {0, -100, 50, 100, -50, 20};
    const int count = o_.streams + 4; // room to move into
    std::ofstream config(dir_ + "/audiod.conf");
    config << "[server]\ndefault-sink = \"s0\"\n[pulse]\nsocket = \"" << dir_
           << "/pulse-native\"\n";
    for (int i = 0; i < count; ++i) {
        // (Built by append: GCC 12 warns falsely of "s" + to_string.)
        std::string name = "s";
        name.append(std::to_string(i));
        sinks_.push_back({name, quanta[i % 5], ppms[i % 6]});
        config << "[sinks.s" << i << "]\ntype = \"null\"\nquantum = " << quanta[i % 5]
               << "\nclock-ppm = " << ppms[i % 6] << "\n";
    }
    config.close();
    listener_ = audiod::soak::listen_at(dir_ + "/socket");
    return listener_ >= 0 && launch_server();
}

bool Soak::launch_server() {
    // Socket activation: the socket is this program's, passed to each
    // server as a service manager passes it ($LISTEN_PID is the server's
    // own pid: the shell's, which execs it).
    server_ = audiod::soak::spawn({"/bin/sh", "-c", "LISTEN_PID=$$ LISTEN_FDS=1 exec \"$0\" \"$@\"",
                                   tool("audiod"), "--config", dir_ + "/audiod.conf", "--state",
                                   dir_ + "/state"},
                                  dir_ + "/audiod.log", listener_);
    for (int i = 0; i < 200 && server_ > 0; ++i) {
        std::string out;
        if (audiod::soak::run({tool("audioctl"), "info"}, out, 5000) == 0) {
            return true;
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    return false;
}

bool Soak::altered(const Player& p, double t) const {
    const auto life = life_altered_until_.find(p.life);
    return (life != life_altered_until_.end() && t < life->second) || altered(p.sink, t);
}

bool Soak::altered(const std::string& sink, double t) const {
    const auto found = sink_altered_until_.find(sink);
    return found != sink_altered_until_.end() && t < found->second;
}

std::string Soak::free_sink(bool at_unity) {
    std::vector<std::string> free;
    for (const Sink& s : sinks_) {
        if (at_unity && altered(s.name, now_s())) {
            continue;
        }
        const bool taken = std::any_of(players_.begin(), players_.end(), [&](const Player& p) {
            return p.ended_s < 0 && p.sink == s.name;
        });
        if (!taken) {
            free.push_back(s.name);
        }
    }
    if (free.empty()) {
        return "";
    }
    return free[std::uniform_int_distribution<size_t>(0, free.size() - 1)(rng_)];
}

void Soak::start_player(const std::string& sink, Kind kind) {
    // A number no life has used for 10 s: its last frames are long read.
    uint32_t number = 0;
    for (uint32_t n = 1; n <= 31 && number == 0; ++n) {
        const bool live = std::any_of(players_.begin(), players_.end(), [&](const Player& p) {
            return p.ended_s < 0 && p.number == n;
        });
        if (!live && now_s() - last_end_of_number_[n] > 10) {
            number = n;
        }
    }
    if (number == 0 || sink.empty()) {
        return;
    }
    Player p;
    p.number = number;
    p.life = ++lives_;
    p.sink = sink;
    p.app = "soak-" + std::to_string(p.life);
    p.started_s = now_s();
    p.kind = kind;
    if (kind != Kind::libaudiod) {
        // aplay or pacat, fed the numbered stream as raw frames through a
        // pipe by this program (--write-numbered).
        int pipe_fds[2];
        if (pipe2(pipe_fds, O_CLOEXEC) != 0) {
            return;
        }
        p.feeder = audiod::soak::spawn_with_stdio(
            {self_, "--write-numbered", std::to_string(number)}, -1, pipe_fds[1]);
        const std::vector<std::string> argv =
            kind == Kind::aplay ? std::vector<std::string>{"/usr/bin/aplay",
                                                           "-q",
                                                           "-D",
                                                           "audiod:" + sink,
                                                           "-t",
                                                           "raw",
                                                           "-f",
                                                           "S16_LE",
                                                           "-c",
                                                           "2",
                                                           "-r",
                                                           "48000"}
                                : std::vector<std::string>{"/usr/bin/pacat",
                                                           "--playback",
                                                           "--raw",
                                                           "--format=s16le",
                                                           "--channels=2",
                                                           "--rate=48000",
                                                           "--device=" + sink,
                                                           "--client-name=" + p.app};
        // Only aplay loads code of this build (the plugin); pacat speaks
        // the protocol.
        if (kind == Kind::aplay && !o_.preload.empty()) {
            setenv("LD_PRELOAD", o_.preload.c_str(), 1);
        }
        p.pid = audiod::soak::spawn_with_stdio(argv, pipe_fds[0], players_log_fd_);
        unsetenv("LD_PRELOAD");
        ::close(pipe_fds[0]);
        ::close(pipe_fds[1]);
    } else {
        const int latency = std::uniform_int_distribution<int>(30, 200)(rng_);
        p.pid = audiod::soak::spawn({tool("audiod-test-client"), "--signal", "numbered", "--seed",
                                     std::to_string(number), "--frames", "1000000000000", "--sink",
                                     sink, "--app", p.app, "--latency-ms", std::to_string(latency)},
                                    dir_ + "/players.log");
    }
    if (p.pid > 0) {
        note("start life " + std::to_string(p.life) + " (number " + std::to_string(number) + ", " +
             kind_name(kind) + ") on " + sink);
        players_.push_back(p);
        ++events_[std::string(kind_name(kind)) + " started"];
    }
}

void Soak::find_stream_ids() {
    const bool all_known = std::all_of(players_.begin(), players_.end(), [](const Player& p) {
        return p.ended_s >= 0 || p.stream_id != 0;
    });
    if (all_known) {
        return;
    }
    std::string out;
    if (!audioctl({"list", "streams"}, &out)) {
        return;
    }
    // Columns: ID APP SINK ...; a player's application is its own name.
    std::istringstream lines(out);
    for (std::string line; std::getline(lines, line);) {
        std::istringstream words(line);
        std::string id, app, sink, word, pid;
        words >> id >> app >> sink;
        while (words >> word) {
            pid = word; // the last column
        }
        for (Player& p : players_) {
            if (p.ended_s < 0 && pid == std::to_string(p.pid) &&
                std::isdigit(static_cast<unsigned char>(id[0]))) {
                p.stream_id = static_cast<uint32_t>(std::stoul(id));
                p.sink = sink;
            }
        }
    }
}

Player* Soak::random_player(bool listed, const std::function<bool(const Player&)>& also) {
    std::vector<Player*> live;
    for (Player& p : players_) {
        if (p.ended_s < 0 && !p.stopped && (!listed || p.stream_id != 0) && (!also || also(p))) {
            live.push_back(&p);
        }
    }
    if (live.empty()) {
        return nullptr;
    }
    return live[std::uniform_int_distribution<size_t>(0, live.size() - 1)(rng_)];
}

void Soak::event() {
    const int roll = std::uniform_int_distribution<int>(0, 99)(rng_);
    const double hold = std::uniform_real_distribution<double>(0.3, 2.0)(rng_);
    const double t = now_s();
    if (roll < 30) {
        Player* p = random_player(true, [&](const Player& q) { return !altered(q, t); });
        const std::string to = free_sink(true);
        if (p != nullptr && !to.empty() &&
            audioctl({"move-stream", std::to_string(p->stream_id), to})) {
            note("move life " + std::to_string(p->life) + " (stream " +
                 std::to_string(p->stream_id) + ") " + p->sink + " -> " + to);
            p->sink = to;
            ++events_["move"];
        }
    } else if (roll < 45) {
        if (Player* p = random_player(true)) {
            const std::string id = std::to_string(p->stream_id);
            if (audioctl({"set-volume", id, "50%"})) {
                life_altered_until_[p->life] = t + hold + 0.5;
                note("volume 50% life " + std::to_string(p->life) + " for " + std::to_string(hold));
                ++events_["stream volume"];
                pending_.push_back({t + hold, [this, id] {
                                        note("volume 100% stream " + id);
                                        audioctl({"set-volume", id, "100%"});
                                    }});
            }
        }
    } else if (roll < 52) {
        if (Player* p =
                random_player(true, [](const Player& q) { return q.kind == Kind::libaudiod; })) {
            const std::string target = "app:" + p->app;
            if (audioctl({"set-volume", target, "70%"})) {
                life_altered_until_[p->life] = t + hold + 0.5;
                note("volume 70% " + target + " for " + std::to_string(hold));
                ++events_["app volume"];
                pending_.push_back({t + hold, [this, target] {
                                        note("volume 100% " + target);
                                        audioctl({"set-volume", target, "100%"});
                                    }});
            }
        }
    } else if (roll < 57) {
        const std::string sink =
            sinks_[std::uniform_int_distribution<size_t>(0, sinks_.size() - 1)(rng_)].name;
        if (audioctl({"set-volume", "sink:" + sink, "80%"})) {
            sink_altered_until_[sink] = t + hold + 0.5;
            note("volume 80% sink " + sink + " for " + std::to_string(hold));
            ++events_["sink volume"];
            pending_.push_back({t + hold, [this, sink] {
                                    note("volume 100% sink " + sink);
                                    audioctl({"set-volume", "sink:" + sink, "100%"});
                                }});
        }
    } else if (roll < 67) {
        if (Player* p = random_player(true)) {
            const std::string id = std::to_string(p->stream_id);
            if (audioctl({"mute", id, "on"})) {
                note("mute life " + std::to_string(p->life) + " for " + std::to_string(hold));
                ++events_["stream mute"];
                const uint32_t life = p->life;
                causes_.push_back({life, "", t - 0.5, t + hold + 0.5, "stream muted"});
                pending_.push_back({t + hold, [this, id] {
                                        note("unmute stream " + id);
                                        audioctl({"mute", id, "off"});
                                    }});
            }
        }
    } else if (roll < 72) {
        const std::string sink =
            sinks_[std::uniform_int_distribution<size_t>(0, sinks_.size() - 1)(rng_)].name;
        if (audioctl({"mute", "sink:" + sink, "on"})) {
            note("mute sink " + sink + " for " + std::to_string(hold));
            ++events_["sink mute"];
            causes_.push_back({0, sink, t - 0.5, t + hold + 0.5, "sink " + sink + " muted"});
            pending_.push_back({t + hold, [this, sink] {
                                    note("unmute sink " + sink);
                                    audioctl({"mute", "sink:" + sink, "off"});
                                }});
        }
    } else if (roll < 83) {
        if (Player* p = random_player(false)) {
            kill(p->pid, SIGSTOP);
            note("SIGSTOP life " + std::to_string(p->life) + " for " + std::to_string(hold));
            p->stopped = true;
            ++events_["player stopped"];
            const uint32_t life = p->life;
            causes_.push_back({life, "", t, t + hold + 0.5, "player stopped"});
            pending_.push_back({t + hold, [this, life] {
                                    for (Player& q : players_) {
                                        if (q.life == life && q.ended_s < 0) {
                                            kill(q.pid, SIGCONT);
                                            note("SIGCONT life " + std::to_string(life));
                                            q.stopped = false;
                                        }
                                    }
                                }});
        }
    } else if (roll < 86) {
        hold_server();
    } else {
        if (Player* p = random_player(false)) {
            note("SIGKILL life " + std::to_string(p->life) + " on " + p->sink);
            end_player(*p);
            ++events_["player killed"];
        }
        start_player(free_sink(), next_kind());
    }
}

Kind Soak::next_kind() {
    const int roll = std::uniform_int_distribution<int>(0, 3)(rng_);
    return roll == 1 ? Kind::aplay : roll == 3 ? Kind::pacat : Kind::libaudiod;
}

// A player that ended by itself: a pacat when the server it spoke to was
// killed (libpulse does not reconnect: its stream ends, as PulseAudio's
// own do when the server goes); any other is a failure. Either is
// replaced.
void Soak::reap_players() {
    int replace = 0;
    for (Player& p : players_) {
        if (p.ended_s >= 0) {
            continue;
        }
        int status = 0;
        if (waitpid(p.pid, &status, WNOHANG) != p.pid) {
            continue;
        }
        const double t = now_s();
        const bool expected = p.kind == Kind::pacat && t - last_restart_s_ < 15;
        note("life " + std::to_string(p.life) + " (" + kind_name(p.kind) + ") ended by itself" +
             (expected ? " after the server's restart" : ""));
        if (!expected) {
            player_failures_.push_back("life " + std::to_string(p.life) + " (" + kind_name(p.kind) +
                                       ") ended by itself at " + std::to_string(int(t)) +
                                       " s, status " + std::to_string(status));
        }
        if (p.feeder > 0) {
            kill(p.feeder, SIGKILL);
            audiod::soak::wait_for(p.feeder, 5000);
        }
        p.ended_s = t;
        last_end_of_number_[p.number] = t;
        ++events_[std::string(kind_name(p.kind)) + " ended by itself"];
        ++replace;
    }
    for (; replace > 0; --replace) {
        start_player(free_sink(), next_kind());
    }
}

void Soak::end_player(Player& p) {
    kill(p.pid, SIGCONT);
    kill(p.pid, SIGKILL);
    audiod::soak::wait_for(p.pid, 5000);
    if (p.feeder > 0) {
        kill(p.feeder, SIGKILL);
        audiod::soak::wait_for(p.feeder, 5000);
    }
    p.ended_s = now_s();
    last_end_of_number_[p.number] = p.ended_s;
}

void Soak::hold_server() {
    // Up to 2 s, all of it here: nothing can be asked of a stopped server.
    const double hold = std::uniform_real_distribution<double>(0.2, 2.0)(rng_);
    const double t = now_s();
    kill(server_, SIGSTOP);
    note("SIGSTOP server for " + std::to_string(hold));
    std::this_thread::sleep_for(std::chrono::duration<double>(hold));
    kill(server_, SIGCONT);
    note("SIGCONT server");
    ++events_["server held"];
    // Held over half a second, the players took the server for stalled
    // and kept their own clocks; they make their streams anew now.
    settle(t, "server held");
}

void Soak::restart_server() {
    const double t = now_s();
    last_restart_s_ = t;
    kill(server_, SIGKILL);
    audiod::soak::wait_for(server_, 10000);
    note("SIGKILL server");
    if (!launch_server()) {
        note("the server did not start again");
        server_ = -1;
        return;
    }
    note("server started again");
    ++server_lives_;
    ++events_["server restarted"];
    settle(t, "server killed and restarted");
}

void Soak::settle(double since, const std::string& why) {
    // Time for the players' supervisors to notice and come back (they
    // look every 250 ms).
    std::this_thread::sleep_for(std::chrono::milliseconds(1500));
    // Every player comes back on its own, its stream made anew (a new id);
    // where each plays is read again, and two that came back on one sink
    // (a stream made anew goes to the sink its player first named, not to
    // where it was moved since) are parted. What they lost meanwhile has
    // this cause.
    for (Player& p : players_) {
        p.stream_id = 0;
    }
    for (int i = 0; i < 300; ++i) {
        reap_players();
        find_stream_ids();
        const bool all = std::all_of(players_.begin(), players_.end(), [](const Player& p) {
            return p.ended_s >= 0 || p.stopped || p.stream_id != 0;
        });
        if (all) {
            break;
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    std::map<std::string, int> on_sink;
    for (Player& p : players_) {
        if (p.ended_s < 0 && p.stream_id != 0 && ++on_sink[p.sink] > 1) {
            const std::string to = free_sink();
            if (!to.empty() && audioctl({"move-stream", std::to_string(p.stream_id), to})) {
                note("part life " + std::to_string(p.life) + " " + p.sink + " -> " + to);
                p.sink = to;
            }
        }
    }
    causes_.push_back({0, "", since - 0.5, now_s() + 2, why});
}

void Soak::sample() {
    const int pacats =
        static_cast<int>(std::count_if(players_.begin(), players_.end(), [](const Player& p) {
            return p.ended_s < 0 && p.kind == Kind::pacat;
        }));
    footprints_.push_back({now_s(), server_lives_, audiod::soak::footprint(server_),
                           audiod::soak::descriptor_kinds(server_), pacats});
}

// How fast `value` grows, per minute: the least-squares slope within each
// server's life past its first `warm_s` seconds, pooled (each life its
// own level, one slope for all), with the number of pacat players as a
// second regressor: a pacat's stream holds an eventfd more than the
// players it replaces, and pacats end with each restart and come back
// one kill in four, so their number climbs through each server's life.
double slope_per_minute(const std::vector<Sampled>& samples, double warm_s,
                        const std::function<double(const Footprint&)>& value) {
    std::map<int, std::vector<std::array<double, 3>>> lives; // minutes, pacats, value
    std::map<int, double> born;
    for (const Sampled& s : samples) {
        born.try_emplace(s.server, s.at_s);
        if (s.at_s - born[s.server] >= warm_s) {
            lives[s.server].push_back({s.at_s / 60, double(s.pacats), value(s.footprint)});
        }
    }
    double s11 = 0, s12 = 0, s22 = 0, s1y = 0, s2y = 0;
    for (const auto& [server, points] : lives) {
        if (points.size() < 3) {
            continue;
        }
        std::array<double, 3> mean{};
        for (const auto& p : points) {
            for (size_t k = 0; k < 3; ++k) {
                mean[k] += p[k] / double(points.size());
            }
        }
        for (const auto& p : points) {
            const double x1 = p[0] - mean[0], x2 = p[1] - mean[1], y = p[2] - mean[2];
            s11 += x1 * x1;
            s12 += x1 * x2;
            s22 += x2 * x2;
            s1y += x1 * y;
            s2y += x2 * y;
        }
    }
    const double d = s11 * s22 - s12 * s12;
    if (s22 == 0 || d <= 1e-9 * s11 * s22) {
        return s11 == 0 ? 0 : s1y / s11; // pacats never changed: time alone
    }
    return (s22 * s1y - s12 * s2y) / d;
}

int Soak::verdict() {
    // Each run belongs to the life of its number that was playing then.
    std::vector<Run> runs;
    uint64_t stray = 0, read = 0, silent = 0;
    std::vector<std::string> failures;
    for (const auto& r : recorders_) {
        stray += r->ledger().stray_frames();
        read += r->ledger().frames_read();
        silent += r->ledger().silent_frames();
        if (!r->failure().empty()) {
            failures.push_back("recorder " + r->sink() + ": " + r->failure());
        }
        for (const double at : r->overruns()) {
            causes_.push_back(
                {0, r->sink(), at - 2, at, "recording of " + r->sink() + " fell behind"});
        }
        for (Run run : r->ledger().runs()) {
            uint32_t life = 0;
            for (const Player& p : players_) {
                if (p.number == run.stream && p.started_s <= run.first_s + 1) {
                    life = p.life;
                }
            }
            if (life == 0) {
                failures.push_back("frames of stream " + std::to_string(run.stream) +
                                   " before any player played it");
                continue;
            }
            run.stream = life;
            runs.push_back(run);
        }
    }
    const audiod::test::Verdict v = audiod::test::judge(runs, causes_, 1.5);

    std::printf("audiod-soak: %.1f minutes, seed %u, %d players at once, %zu lives\n", now_s() / 60,
                o_.seed, o_.streams, players_.size());
    std::printf("events:");
    for (const auto& [name, count] : events_) {
        std::printf(" %s %d,", name.c_str(), count);
    }
    std::printf(" commands refused %d\n", failed_commands_);
    for (const std::string& r : refusals_) {
        std::printf("  refused: audioctl%s\n", r.c_str());
    }
    std::printf("frames recorded %llu (silent %llu), checked %llu once and in order (%llu at "
                "another gain, by count), moves seen lossless %llu\n",
                static_cast<unsigned long long>(read), static_cast<unsigned long long>(silent),
                static_cast<unsigned long long>(v.frames_checked),
                static_cast<unsigned long long>(v.unreadable),
                static_cast<unsigned long long>(v.hand_overs));
    uint64_t explained = 0;
    std::map<std::string, uint64_t> by_cause;
    std::ofstream gaps_file;
    if (!o_.keep.empty()) {
        std::filesystem::create_directories(o_.keep);
        gaps_file.open(o_.keep + "/gaps");
    }
    for (const auto& gap : v.gaps) {
        gaps_file << "life " << gap.stream << " lost " << gap.frames << " after " << gap.after
                  << ", " << gap.from_s << "-" << gap.to_s
                  << " s: " << (gap.cause.empty() ? "NO CAUSE" : gap.cause) << "\n";
        if (!gap.cause.empty()) {
            explained += gap.frames;
            by_cause[gap.cause.rfind("sink ", 0) == 0 ? "sink muted" : gap.cause] += gap.frames;
        } else {
            std::printf("GAP without a cause: life %u lost %llu frames after %llu, %.2f-%.2f s\n",
                        gap.stream, static_cast<unsigned long long>(gap.frames),
                        static_cast<unsigned long long>(gap.after), gap.from_s, gap.to_s);
            for (const auto& [at, what] : journal_) {
                if (at > gap.from_s - 3 && at < gap.to_s + 3) {
                    std::printf("  %8.2f s  %s\n", at, what.c_str());
                }
            }
        }
    }
    std::printf("gaps explained: %llu frames (", static_cast<unsigned long long>(explained));
    for (const auto& [cause, frames] : by_cause) {
        std::printf(" %s %llu", cause.c_str(), static_cast<unsigned long long>(frames));
    }
    std::printf(" ); lost without a cause: %llu; stray frames (mixed or at another gain at a "
                "run's end): %llu\n",
                static_cast<unsigned long long>(v.lost_without_cause()),
                static_cast<unsigned long long>(stray));
    for (const auto& o : v.overlaps) {
        std::printf("PLAYED TWICE: life %u, %llu frames from %llu, at %.2f s\n", o.stream,
                    static_cast<unsigned long long>(o.frames),
                    static_cast<unsigned long long>(o.from), o.at_s);
    }
    // Lives long enough to be heard must have been.
    std::map<uint32_t, uint64_t> heard;
    for (const Run& r : runs) {
        heard[r.stream] += r.last - r.first + 1;
    }
    for (const Player& p : players_) {
        const double end = p.ended_s < 0 ? now_s() : p.ended_s;
        if (end - p.started_s > 5 && heard[p.life] == 0) {
            failures.push_back("life " + std::to_string(p.life) + " (" + p.app + ") played for " +
                               std::to_string(int(end - p.started_s)) +
                               " s and none of it was heard");
        }
    }
    // Resources: flat after each server's warm-up (30 s).
    const double warm = 30;
    const double fd_slope = slope_per_minute(footprints_, warm, [](auto& f) { return f.fds; });
    const double thread_slope =
        slope_per_minute(footprints_, warm, [](auto& f) { return f.threads; });
    const double rss_slope =
        slope_per_minute(footprints_, warm, [](auto& f) { return f.rss_kib / 1024.0; });
    if (!footprints_.empty()) {
        const Footprint& a = footprints_.front().footprint;
        const Footprint& b = footprints_.back().footprint;
        std::printf("server: fds %ld -> %ld (%+.2f/min), threads %ld -> %ld (%+.2f/min), RSS %.1f "
                    "-> %.1f MiB (%+.3f MiB/min), each of %d servers after %.0f s of warm-up\n",
                    a.fds, b.fds, fd_slope, a.threads, b.threads, thread_slope, a.rss_kib / 1024.0,
                    b.rss_kib / 1024.0, rss_slope, server_lives_, warm);
    }
    if (fd_slope > 1) {
        failures.push_back("descriptors grow by " + std::to_string(fd_slope) + " a minute");
    }
    if (thread_slope > 0.5) {
        failures.push_back("threads grow by " + std::to_string(thread_slope) + " a minute");
    }
    // A sanitizer's allocator holds freed memory back (ASan's quarantine
    // alone grows to 256 MiB): there LeakSanitizer, at the server's exit,
    // is the judge of memory.
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
    std::printf("memory: not bounded under a sanitizer (its allocator holds freed memory)\n");
#else
    if (rss_slope > 2) {
        failures.push_back("memory grows by " + std::to_string(rss_slope) + " MiB a minute");
    }
#endif
    if (v.lost_without_cause() > 0) {
        const auto* worst = v.worst_without_cause();
        failures.push_back(std::to_string(v.lost_without_cause()) +
                           " frames lost without a cause (worst gap " +
                           std::to_string(worst->frames) + ")");
    }
    if (!v.overlaps.empty()) {
        failures.push_back(std::to_string(v.overlaps.size()) + " runs played twice");
    }
    failures.insert(failures.end(), player_failures_.begin(), player_failures_.end());
    // The state file (per-application settings, written as the soak moves
    // and sets volumes) must survive every kill: a server that finds it
    // corrupt moves it aside.
    if (std::filesystem::exists(dir_ + "/state.corrupt")) {
        failures.push_back("the server found its state file corrupt after a kill");
    }
    if (v.frames_checked == 0) {
        failures.push_back("nothing was checked");
    }
    for (const std::string& f : failures) {
        std::printf("FAILED: %s\n", f.c_str());
    }
    std::printf("reproduce: audiod-soak --minutes %g --seed %u --streams %d\n", o_.minutes, o_.seed,
                o_.streams);
    return failures.empty() ? 0 : 1;
}

int Soak::run() {
    char pattern[] = "/tmp/audiod-soak-XXXXXX";
    if (mkdtemp(pattern) == nullptr) {
        std::perror("audiod-soak: mkdtemp");
        return 1;
    }
    dir_ = pattern;
    setenv("AUDIOD_SOCKET", (dir_ + "/socket").c_str(), 1);
    setenv("XDG_RUNTIME_DIR", dir_.c_str(), 1);
    setenv("XDG_STATE_HOME", dir_.c_str(), 1);
    // aplay finds pcm.audiod of this build (or of the installed tree).
    players_log_fd_ =
        ::open((dir_ + "/players.log").c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
    const std::string alsa_conf = o_.bin + "/../share/alsa/alsa.conf.d/50-audiod.conf";
    if (std::filesystem::exists(alsa_conf)) {
        setenv("ALSA_CONFIG_PATH", ("/usr/share/alsa/alsa.conf:" + alsa_conf).c_str(), 1);
    }
    setenv("HOME", dir_.c_str(), 1); // no ~/.asoundrc
    setenv("PULSE_SERVER", ("unix:" + dir_ + "/pulse-native").c_str(), 1);
    if (!start_server()) {
        std::fprintf(stderr, "audiod-soak: the server did not start; its log:\n");
        std::ifstream log(dir_ + "/audiod.log");
        std::fprintf(stderr, "%s", std::string(std::istreambuf_iterator<char>(log), {}).c_str());
        return 1;
    }
    start_ = Clock::now();
    for (const Sink& s : sinks_) {
        recorders_.push_back(std::make_unique<Recorder>(s.name, latest_, start_));
    }
    // Half the players are libaudiod's, a quarter aplay through the ALSA
    // plugin, a quarter pacat through the PulseAudio-protocol server.
    for (int i = 0; i < o_.streams; ++i) {
        start_player(sinks_[static_cast<size_t>(i)].name, i % 4 == 1   ? Kind::aplay
                                                          : i % 4 == 3 ? Kind::pacat
                                                                       : Kind::libaudiod);
    }
    const double end_s = o_.minutes * 60;
    const double sample_every = o_.minutes > 10 ? 10 : 5;
    // The server is killed and started again a minute in, then every
    // three minutes.
    double next_event = 3, next_sample = 0, next_restart = 60;
    while (now_s() < end_s) {
        reap_players();
        find_stream_ids();
        const double t = now_s();
        for (size_t i = 0; i < pending_.size();) {
            if (pending_[i].at_s <= t) {
                auto undo = std::move(pending_[i].undo);
                pending_.erase(pending_.begin() + static_cast<long>(i));
                undo();
            } else {
                ++i;
            }
        }
        if (t >= next_sample) {
            sample();
            next_sample += sample_every;
        }
        if (t >= next_restart && t + 20 < end_s) {
            restart_server();
            next_restart += 180;
            if (server_ < 0) {
                std::printf("FAILED: the server did not start again at %.1f s\n", now_s());
                break;
            }
        } else if (t >= next_event) {
            event();
            next_event += 1;
        }
        if (waitpid(server_, nullptr, WNOHANG) == server_) {
            std::printf("FAILED: the server ended at %.1f s\n", now_s());
            server_ = -1;
            break;
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    for (auto& p : pending_) {
        p.undo();
    }
    sample();
    const std::map<std::string, int> fd_kinds = audiod::soak::descriptor_kinds(server_);
    // The end: players stop (their last frames need not arrive), then the
    // recordings, then the server.
    const double ending = now_s();
    for (Player& p : players_) {
        if (p.ended_s < 0) {
            end_player(p);
            p.ended_s = ending;
        }
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(500));
    for (auto& r : recorders_) {
        r->stop();
    }
    int server_status = -1;
    if (server_ > 0) {
        kill(server_, SIGTERM);
        server_status = audiod::soak::wait_for(server_, 30000);
    }
    int result = verdict();
    std::printf("the server's descriptors at the end:");
    for (const auto& [kind, count] : fd_kinds) {
        std::printf(" %s %d,", kind.c_str(), count);
    }
    std::printf("\n");
    if (server_status != 0) {
        std::printf("FAILED: the server's exit status was %d\n", server_status);
        result = 1;
    }
    // Errors in the log: printed for the reader (a killed player's
    // connection ending is expected). A sanitizer's report, in the
    // server's log or the players', fails the run.
    int errors = 0, reports = 0;
    for (const char* name : {"audiod.log", "players.log"}) {
        std::ifstream log(dir_ + "/" + name);
        for (std::string line; std::getline(log, line);) {
            const bool report = line.find("ERROR: AddressSanitizer") != std::string::npos ||
                                line.find("ERROR: LeakSanitizer") != std::string::npos ||
                                line.find("runtime error:") != std::string::npos ||
                                line.find("WARNING: ThreadSanitizer") != std::string::npos;
            reports += report ? 1 : 0;
            if ((report || line.find(": error ") != std::string::npos) && ++errors <= 10) {
                std::printf("%s: %s\n", name, line.c_str());
            }
        }
    }
    std::printf("logs: %d error lines, %d sanitizer reports\n", errors, reports);
    if (reports > 0) {
        std::printf("FAILED: sanitizer reports (see above)\n");
        result = 1;
    }
    if (!o_.keep.empty()) {
        std::filesystem::create_directories(o_.keep);
        std::ofstream samples(o_.keep + "/footprints");
        for (const Sampled& f : footprints_) {
            samples << f.at_s << " server " << f.server << " pacats " << f.pacats << " fds "
                    << f.footprint.fds << " threads " << f.footprint.threads << " rss-kib "
                    << f.footprint.rss_kib;
            for (const auto& [kind, count] : f.descriptors) {
                samples << " " << kind << "=" << count;
            }
            samples << "\n";
        }
        std::ofstream journal(o_.keep + "/events");
        for (const auto& [at, what] : journal_) {
            journal << at << " " << what << "\n";
        }
        for (const char* f : {"audiod.conf", "audiod.log", "players.log"}) {
            std::filesystem::copy_file(dir_ + "/" + f, o_.keep + "/" + f,
                                       std::filesystem::copy_options::overwrite_existing);
        }
    }
    std::filesystem::remove_all(dir_);
    std::printf("%s\n", result == 0 ? "soak passed" : "soak FAILED");
    return result;
}

// --write-numbered N: stream N's numbered frames on standard output, raw
// s16le stereo, until the reader goes (aplay's feed).
int write_numbered(uint32_t stream) {
    std::vector<int16_t> block(2 * 4800);
    for (uint64_t frame = 0;;) {
        for (size_t i = 0; i < 4800; ++i, ++frame) {
            audiod::test::numbered_frame(stream, frame, block[2 * i], block[2 * i + 1]);
        }
        const char* data = reinterpret_cast<const char*>(block.data());
        size_t left = block.size() * sizeof(int16_t);
        while (left > 0) {
            const ssize_t n = ::write(1, data, left);
            if (n <= 0) {
                return 0;
            }
            data += n;
            left -= static_cast<size_t>(n);
        }
    }
}

} // namespace

int main(int argc, char** argv) {
    if (argc == 3 && std::string(argv[1]) == "--write-numbered") {
        std::signal(SIGPIPE, SIG_DFL);
        return write_numbered(static_cast<uint32_t>(std::strtoul(argv[2], nullptr, 10)));
    }
    const auto options = parse(argc, argv);
    if (!options) {
        return 2;
    }
    std::signal(SIGPIPE, SIG_IGN);
    return Soak(*options).run();
}
