// audiod-soak: everything at once, for as long as asked, and proof that
// every surviving sample arrived (issue 42; bench/soak/README.md).
//
// One server with sinks of different quanta and clocks (null sinks, and
// the test sound card's ALSA sink); players (libaudiod ones, aplay
// through the ALSA plugin, pacat through the PulseAudio-protocol server)
// each playing a numbered stream (tests/support/numbered_frames.h); every
// sink's monitor recorded and read into a ledger (stream_ledger.h). Every
// second a seeded event (events.cpp, sink_faults.cpp); a minute in and
// every three minutes after, the server killed and started again on the
// socket this program holds (server_life.cpp). At the end (verdict.cpp):
// every sample of every stream arrived once, in order, gaps only where an
// event explains them; the log complained only during faults; nothing
// leaked.
//
//   audiod-soak [--minutes N] [--seed S] [--streams N] [--bin DIR] [--keep DIR]
#include "soak.h"
#include "support/numbered_frames.h"

#include <algorithm>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <fcntl.h>
#include <filesystem>
#include <fstream>
#include <optional>
#include <string>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>
#include <vector>

namespace {

using audiod::soak::Options;

// SIGINT or SIGTERM: the soak ends early, as at its end (players, server
// and jackd stopped, the verdict on what ran), leaving nothing behind.
volatile std::sig_atomic_t interrupted = 0;

void interrupt(int) {
    interrupted = 1;
}

const char* const kUsage =
    "Usage: audiod-soak [--minutes N] [--seed S] [--streams N] [--bin DIR] [--keep DIR]\n"
    "                   [--preload LIBS]\n"
    "Run an audiod under a seeded storm of events for N minutes and check that\n"
    "every sample of every stream arrived once and in order.\n"
    "\n"
    "  --minutes N   how long (default 60; fractions allowed)\n"
    "  --seed S      the events' seed (default 1): the same seed, the same events\n"
    "  --streams N   players at once, 1..48 (default 32)\n"
    "  --bin DIR     where audiod, audioctl and audiod-test-client are (default:\n"
    "                this program's directory)\n"
    "  --keep DIR    keep the server's configuration and log, the events and the\n"
    "                gaps in DIR\n"
    "  --preload LIBS  LD_PRELOAD for aplay, whose ALSA plugin comes from --bin's\n"
    "                build: a sanitizer build's needs its runtime (libasan.so.8)\n"
    "  --server NAME audiod (default) or pipewire: PipeWire, WirePlumber and\n"
    "                pipewire-pulse on a private runtime directory and bus, driven\n"
    "                by pactl, with the events both servers can do; its players\n"
    "                pw-cat, aplay through PipeWire's ALSA plugin, pacat, paplay\n"
    "  --events common  against audiod too, only the events both can do: moves,\n"
    "                stream and sink volumes and mutes, players stopped and killed\n"
    "  --no-jack     no JACK sink (a jackd without real-time rights on a loaded\n"
    "                machine misses its periods for over 500 ms now and then, and\n"
    "                the sink then fails, as it should: not the server's doing)\n"
    "  --pipewire-alsa ROOT  where PipeWire's ALSA plugin is unpacked (default: the\n"
    "                installed one, else /tmp/bench/pwalsa of ../shared/bench)\n"
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
        if (key == "--no-jack") {
            o.jack = false;
            continue;
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
            if (o.streams < 1 || o.streams > 48) {
                std::fprintf(stderr, "audiod-soak: --streams wants 1..48\n");
                return std::nullopt;
            }
        } else if (key == "--bin") {
            o.bin = value;
        } else if (key == "--keep") {
            o.keep = value;
        } else if (key == "--preload") {
            o.preload = value;
        } else if (key == "--server") {
            if (value != "audiod" && value != "pipewire") {
                std::fprintf(stderr, "audiod-soak: --server wants audiod or pipewire\n");
                return std::nullopt;
            }
            o.pipewire = value == "pipewire";
            o.common = o.common || o.pipewire;
        } else if (key == "--events") {
            if (value != "common" && value != "all") {
                std::fprintf(stderr, "audiod-soak: --events wants common or all\n");
                return std::nullopt;
            }
            o.common = o.pipewire || value == "common";
        } else if (key == "--pipewire-alsa") {
            o.pipewire_alsa = value;
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

} // namespace

namespace audiod::soak {

bool Soak::audioctl(const std::vector<std::string>& args, std::string* out) {
    // audioctl waits 8 s for an answer (its own default, 2 s, is shorter
    // than a loaded machine's slowest reload), and is killed after 10.
    std::vector<std::string> argv = {tool("audioctl"), "-t", "8000"};
    argv.insert(argv.end(), args.begin(), args.end());
    std::string text;
    const int status =
        o_.pipewire ? (pactl_command(args, text) ? 0 : 1) : audiod::soak::run(argv, text, 10000);
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
    // A server that answers nothing in 8 s fails the run; where each of
    // its threads was (gdb, where installed) is kept, twice at most.
    const bool unanswered = !o_.pipewire && (status == 128 + SIGKILL ||
                                             text.find("did not answer") != std::string::npos);
    if (unanswered) {
        std::string kept;
        if (stack_dumps_ < 2 && std::filesystem::exists("/usr/bin/gdb")) {
            const std::string file = dir_ + "/stacks-" + std::to_string(++stack_dumps_);
            std::string stacks;
            audiod::soak::run({"/usr/bin/gdb", "-p", std::to_string(server_), "-batch", "-ex",
                               "thread apply all bt"},
                              stacks, 60000);
            std::ofstream(file) << stacks;
            kept = " (its threads' stacks in stacks-" + std::to_string(stack_dumps_) +
                   ", kept by --keep)";
        }
        note("the server did not answer audioctl" + (args.empty() ? "" : " " + args[0]) + kept);
        failures_.push_back("the server did not answer at " + std::to_string(int(now_s())) + " s" +
                            kept);
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

int Soak::run() {
    char pattern[] = "/tmp/audiod-soak-XXXXXX";
    if (mkdtemp(pattern) == nullptr) {
        std::perror("audiod-soak: mkdtemp");
        return 1;
    }
    dir_ = pattern;
    self_ = std::filesystem::read_symlink("/proc/self/exe").string();
    setenv("AUDIOD_SOCKET", (dir_ + "/socket").c_str(), 1);
    setenv("XDG_RUNTIME_DIR", dir_.c_str(), 1);
    setenv("XDG_STATE_HOME", dir_.c_str(), 1);
    players_log_fd_ =
        ::open((dir_ + "/players.log").c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
    // aplay finds pcm.audiod of this build (or of the installed tree); the
    // server finds the test sound card of this build, where there is one
    // (a build with the tests), its fault files in card/.
    std::string alsa_path = "/usr/share/alsa/alsa.conf";
    const std::string plugin_conf = o_.bin + "/../share/alsa/alsa.conf.d/50-audiod.conf";
    if (std::filesystem::exists(plugin_conf)) {
        alsa_path += ":" + plugin_conf;
    }
    const std::string card_conf = o_.bin + "/../tests/alsa/asound.conf";
    if (std::filesystem::exists(card_conf)) {
        alsa_path += ":" + card_conf;
        card_dir_ = dir_ + "/card";
        std::filesystem::create_directories(card_dir_);
        // What the card plays is the monitor's: not kept.
        std::filesystem::create_symlink("/dev/null", card_dir_ + "/played.raw");
        setenv("AUDIOD_TESTCARD_DIR", card_dir_.c_str(), 1);
    }
    setenv("ALSA_CONFIG_PATH", alsa_path.c_str(), 1);
    setenv("HOME", dir_.c_str(), 1); // no ~/.asoundrc
    setenv("PULSE_SERVER", ("unix:" + dir_ + "/pulse-native").c_str(), 1);
    log_ = std::make_unique<LogWatch>(dir_ + "/audiod.log");
    if (!(o_.pipewire ? start_pipewire() : start_server())) {
        std::fprintf(stderr, "audiod-soak: the server did not start; its log:\n");
        std::ifstream log(dir_ + "/audiod.log");
        std::fprintf(stderr, "%s", std::string(std::istreambuf_iterator<char>(log), {}).c_str());
        // Nothing left behind: what did start ends.
        if (o_.pipewire) {
            stop_pipewire();
        }
        end_process(server_, 10000);
        stop_bus();
        stop_jack();
        return 1;
    }
    start_ = Clock::now();
    for (const Sink& s : sinks_) {
        if (s.type == Sink::Type::rtp_land) {
            continue; // the RTP loop's echo, recorded apart (rtp_loop.cpp)
        }
        std::vector<std::string> command;
        if (o_.pipewire) {
            command = pw_cat_command("--record", s.name, "soak-recorder-" + s.name,
                                     "stream.capture.sink = true");
        }
        recorders_.push_back(std::make_unique<Recorder>(s.name, latest_, start_, command));
    }
    if (!o_.pipewire) {
        recorders_.push_back(std::make_unique<Recorder>(kFallbackSink, latest_, start_));
    }
    // Half the players are the server's own clients (libaudiod's, or
    // PipeWire's pw-cat), a quarter aplay through its ALSA plugin, a
    // quarter pacat through the PulseAudio protocol.
    const Kind native = o_.pipewire ? Kind::pwcat : Kind::libaudiod;
    for (int i = 0; i < o_.streams; ++i) {
        start_player(sinks_[static_cast<size_t>(i)].name, i % 4 == 1   ? Kind::aplay
                                                          : i % 4 == 3 ? Kind::pacat
                                                                       : native);
    }
    start_rtp_loop();
    const double end_s = o_.minutes * 60;
    const double sample_every = o_.minutes > 10 ? 10 : 5;
    // The server is killed and started again a minute in, then every
    // three minutes. An event that took seconds (a hold, a sink taken
    // away) is not followed by a burst of the ones it delayed.
    double next_event = 3, next_sample = 0, next_restart = 60;
    while (now_s() < end_s && interrupted == 0) {
        log_->poll(now_s());
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
        if (t >= next_restart && t + 20 < end_s && !o_.common) {
            restart_server();
            next_restart += 180;
            if (server_ < 0) {
                failures_.push_back("the server did not start again at " +
                                    std::to_string(int(now_s())) + " s");
                break;
            }
            next_event = std::max(next_event, now_s());
        } else if (t >= next_event) {
            event();
            next_event = std::max(next_event + 1, now_s());
        }
        if (waitpid(server_, nullptr, WNOHANG) == server_) {
            failures_.push_back("the server ended at " + std::to_string(int(now_s())) + " s");
            server_ = -1;
            break;
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    if (interrupted != 0) {
        std::printf("audiod-soak: interrupted at %.1f minutes; the verdict is on what ran\n",
                    now_s() / 60);
    }
    for (auto& p : pending_) {
        p.undo();
    }
    sample();
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
    if (o_.pipewire) {
        stop_pipewire();
    } else if (server_ > 0) {
        kill(server_, SIGTERM);
    }
    if (server_ > 0) {
        server_status = wait_for(server_, 30000);
        if (server_status < 0) {
            end_process(server_, 1000); // hung: killed, and the run fails on its status
        }
    }
    stop_bus();
    stop_jack();
    stop_rtp_loop();
    log_->poll(now_s());
    return finish(server_status);
}

} // namespace audiod::soak

namespace {

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
    struct sigaction action {};
    action.sa_handler = interrupt;
    sigaction(SIGINT, &action, nullptr);
    sigaction(SIGTERM, &action, nullptr);
    return audiod::soak::Soak(*options).run();
}
