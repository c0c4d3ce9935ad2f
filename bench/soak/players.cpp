// The players: started, found in the server's listing, reaped, ended.
#include "soak.h"

#include <algorithm>
#include <csignal>
#include <fcntl.h>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <sys/wait.h>
#include <unistd.h>

namespace audiod::soak {

const char* kind_name(Kind kind) {
    switch (kind) {
    case Kind::aplay:
        return "aplay";
    case Kind::pacat:
        return "pacat";
    case Kind::paplay:
        return "paplay";
    case Kind::pwcat:
        return "pw-cat";
    case Kind::libaudiod:
        break;
    }
    return "libaudiod";
}

namespace {

// A WAV file (s16le stereo, 48 kHz) of stream `number`'s first `frames`
// numbered frames: paplay's.
bool write_numbered_wav(const std::string& path, uint32_t number, uint32_t frames) {
    std::ofstream out(path, std::ios::binary);
    const auto u32 = [&](uint32_t v) { out.write(reinterpret_cast<const char*>(&v), 4); };
    const auto u16 = [&](uint16_t v) { out.write(reinterpret_cast<const char*>(&v), 2); };
    out.write("RIFF", 4);
    u32(36 + frames * 4);
    out.write("WAVEfmt ", 8);
    u32(16);
    u16(1); // PCM
    u16(2);
    u32(48000);
    u32(48000 * 4);
    u16(4);
    u16(16);
    out.write("data", 4);
    u32(frames * 4);
    std::vector<int16_t> block;
    for (uint32_t f = 0; f < frames; f += 4800) {
        const uint32_t n = std::min<uint32_t>(4800, frames - f);
        block.resize(size_t{n} * 2);
        for (uint32_t i = 0; i < n; ++i) {
            test::numbered_frame(number, f + i, block[2 * i], block[2 * i + 1]);
        }
        out.write(reinterpret_cast<const char*>(block.data()),
                  static_cast<std::streamsize>(block.size() * 2));
    }
    return bool(out);
}

} // namespace

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
        if ((at_unity && altered(s.name, now_s())) || s.type == Sink::Type::rtp_out ||
            s.type == Sink::Type::rtp_land || s.gone) {
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

Player* Soak::player_on(const std::string& sink) {
    for (Player& p : players_) {
        if (p.ended_s < 0 && p.sink == sink) {
            return &p;
        }
    }
    return nullptr;
}

Player* Soak::start_player(const std::string& sink, Kind kind) {
    // A number no life has used for 10 s: its last frames are long read.
    uint32_t number = 0;
    for (uint32_t n = 1; n <= test::kMaxNumberedStream && number == 0; ++n) {
        const bool live = std::any_of(players_.begin(), players_.end(), [&](const Player& p) {
            return p.ended_s < 0 && p.number == n;
        });
        if (!live && now_s() - last_end_of_number_[n] > 10) {
            number = n;
        }
    }
    if (number == 0 || sink.empty()) {
        return nullptr;
    }
    Player p;
    p.number = number;
    p.life = ++lives_;
    p.sink = sink;
    p.app = "soak-" + std::to_string(p.life);
    p.started_s = now_s();
    p.kind = kind;
    if (kind == Kind::paplay) {
        p.plays_s = uniform(20, 60);
        const std::string file = dir_ + "/paplay-" + std::to_string(number) + ".wav";
        if (!write_numbered_wav(file, number, static_cast<uint32_t>(p.plays_s * 48000))) {
            return nullptr;
        }
        p.pid = audiod::soak::spawn_with_stdio(
            {"/usr/bin/paplay", "--device=" + sink, "--client-name=" + p.app, file}, -1,
            players_log_fd_);
    } else if (kind != Kind::libaudiod) {
        // aplay or pacat, fed the numbered stream as raw frames through a
        // pipe by this program (--write-numbered).
        int pipe_fds[2];
        if (pipe2(pipe_fds, O_CLOEXEC) != 0) {
            return nullptr;
        }
        p.feeder = audiod::soak::spawn_with_stdio(
            {self_, "--write-numbered", std::to_string(number)}, -1, pipe_fds[1]);
        // Against PipeWire, aplay goes through its ALSA plugin (the sink
        // and the application's name in its environment), and pw-cat is
        // the native player.
        std::vector<std::string> argv = kind == Kind::aplay
                                            ? std::vector<std::string>{"/usr/bin/aplay",
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
        std::vector<std::string> env;
        if (kind == Kind::aplay && o_.pipewire) {
            argv[3] = "pipewire";
            env = {"PIPEWIRE_NODE=" + sink, "PIPEWIRE_PROPS=" + pipewire_properties(p.app)};
        } else if (kind == Kind::pwcat) {
            argv = pw_cat_command("--playback", sink, p.app);
        }
        // Only aplay loads code of this build (the plugin); pacat speaks
        // the protocol.
        if (kind == Kind::aplay && !o_.preload.empty()) {
            env.push_back("LD_PRELOAD=" + o_.preload);
        }
        p.pid = audiod::soak::spawn_with_stdio(argv, pipe_fds[0], players_log_fd_, env);
        ::close(pipe_fds[0]);
        ::close(pipe_fds[1]);
    } else {
        const int latency = std::uniform_int_distribution<int>(30, 200)(rng_);
        p.pid = audiod::soak::spawn({tool("audiod-test-client"), "--signal", "numbered", "--seed",
                                     std::to_string(number), "--frames", "1000000000000", "--sink",
                                     sink, "--app", p.app, "--latency-ms", std::to_string(latency)},
                                    dir_ + "/players.log");
    }
    if (p.pid <= 0) {
        audiod::soak::end_process(p.feeder, 1000);
        player_failures_.push_back(std::string(kind_name(kind)) + " could not be started");
        return nullptr;
    }
    note("start life " + std::to_string(p.life) + " (number " + std::to_string(number) + ", " +
         kind_name(kind) + ") on " + sink);
    players_.push_back(p);
    ++events_[std::string(kind_name(kind)) + " started"];
    return &players_.back();
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
            // By pid, or (against PipeWire, whose pactl knows no pid of a
            // native stream) by the application's name, each life's own.
            if (p.ended_s < 0 && !sink.empty() && (pid == std::to_string(p.pid) || app == p.app) &&
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
        if (p.ended_s < 0 && !p.stopped && !p.rtp && (!listed || p.stream_id != 0) &&
            (!also || also(p))) {
            live.push_back(&p);
        }
    }
    if (live.empty()) {
        return nullptr;
    }
    return live[std::uniform_int_distribution<size_t>(0, live.size() - 1)(rng_)];
}

// Of eight new players, three libaudiod's, two aplay, two pacat, one
// paplay.
Kind Soak::next_kind() {
    const int roll = std::uniform_int_distribution<int>(0, 7)(rng_);
    const Kind native = o_.pipewire ? Kind::pwcat : Kind::libaudiod;
    return roll < 3 ? native : roll < 5 ? Kind::aplay : roll < 7 ? Kind::pacat : Kind::paplay;
}

// A player that ended by itself: a paplay at its file's end; a pacat or a
// paplay when the server it spoke to was killed (libpulse does not
// reconnect: its stream ends, as PulseAudio's own do when the server
// goes); any other is a failure. Either is replaced.
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
        const bool pulse = p.kind == Kind::pacat || p.kind == Kind::paplay;
        const bool restarted = pulse && t - last_restart_s_ < 15;
        const bool played = p.kind == Kind::paplay && WIFEXITED(status) &&
                            WEXITSTATUS(status) == 0 && t - p.started_s >= p.plays_s * 0.95;
        const bool expected = restarted || played;
        note("life " + std::to_string(p.life) + " (" + kind_name(p.kind) + ") ended by itself" +
             (restarted ? " after the server's restart"
              : played  ? " at its file's end"
                        : ""));
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
        remove_file_of(p);
        ++events_[std::string(kind_name(p.kind)) + " ended by itself"];
        ++replace;
    }
    for (; replace > 0; --replace) {
        start_player(free_sink(), next_kind());
    }
}

void Soak::remove_file_of(const Player& p) {
    if (p.kind == Kind::paplay) {
        std::error_code ignored;
        std::filesystem::remove(dir_ + "/paplay-" + std::to_string(p.number) + ".wav", ignored);
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
    remove_file_of(p);
}

} // namespace audiod::soak
