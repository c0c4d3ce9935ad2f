// The server's lives: its configuration, its start on the soak's socket,
// holds, kills and restarts, and its footprint sampled as it goes.
#include "soak.h"

#include "support/jack_leftovers.h"

#include <algorithm>
#include <csignal>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <thread>
#include <unistd.h>

namespace audiod::soak {

void Soak::write_config() {
    std::ofstream config(dir_ + "/audiod.conf");
    config << "[server]\ndefault-sink = \"" << kFallbackSink << "\"\n[pulse]\nsocket = \"" << dir_
           << "/pulse-native\"\n[sinks." << kFallbackSink << "]\ntype = \"null\"\n";
    for (size_t i = 0; i < sinks_.size(); ++i) {
        const Sink& s = sinks_[i];
        const int quantum = int(i) == changed_quantum_ ? s.quantum * 2 : s.quantum;
        if (s.type == Sink::Type::card) {
            // A generous device buffer (16 quanta): this machine's own
            // scheduling jitter causes no xruns beside the card's.
            config << "[sinks." << s.name << "]\ntype = \"alsa\"\ndevice = \"testcard\"\n"
                   << "periods = 16\nquantum = " << quantum << "\n";
        } else if (s.type == Sink::Type::rtp_out) {
            // L16 in 5 ms packets to the relay, which passes them on to
            // the source at port + 2 (RTCP at + 1, + 3).
            config << "[sinks." << s.name << "]\ntype = \"rtp\"\ndestination = \"127.0.0.1\"\n"
                   << "port = " << rtp_port_ << "\npayload = \"l16\"\nptime = 5\n";
        } else if (s.type == Sink::Type::rtp_land) {
            config << "[sinks." << s.name << "]\ntype = \"null\"\nquantum = " << quantum
                   << "\n[sources.rtp-in]\ntype = \"rtp\"\naddress = \"127.0.0.1\"\nport = "
                   << rtp_port_ + 2
                   << "\npayload = \"l16\"\nstream-channels = 2\nlatency-ms = 40\nsink = \""
                   << s.name << "\"\n";
        } else if (s.type == Sink::Type::jack) {
            config << "[sinks." << s.name << "]\ntype = \"jack\"\nserver = \"" << jack_name_
                   << "\"\nconnect = \"physical\"\nquantum = " << quantum << "\n";
        } else {
            config << "[sinks." << s.name << "]\ntype = \"null\"\nquantum = " << quantum
                   << "\nclock-ppm = " << s.ppm << "\n";
        }
    }
}

// A paced JACK server of the soak's own (`jackd -d dummy`: no sound card,
// no real-time rights), clients given 10 s to answer before it throws
// them out (a loaded machine's), ended with SIGTERM: a jackd killed
// outright can leave JACK's shared registry locked.
bool Soak::start_jack() {
    if (!std::filesystem::exists("/usr/bin/jackd") ||
        !std::filesystem::exists("/usr/bin/jack_wait")) {
        return false;
    }
    jack_name_ = "audiod-soak-" + std::to_string(::getpid());
    jackd_ = spawn({"/usr/bin/jackd", "-n", jack_name_, "-r", "-t", "10000", "-d", "dummy", "-r",
                    "48000", "-p", "256"},
                   dir_ + "/jackd.log");
    std::string out;
    if (jackd_ > 0 && audiod::soak::run({"/usr/bin/jack_wait", "-w", "-t", "30", "-s", jack_name_},
                                        out, 40000) == 0) {
        return true;
    }
    std::fprintf(stderr, "audiod-soak: jackd did not start (%s); no JACK sink\n", out.c_str());
    stop_jack();
    jack_name_.clear();
    return false;
}

void Soak::stop_jack() {
    if (jackd_ <= 0) {
        return;
    }
    end_process(jackd_, 10000);
    jackd_ = -1;
    audiod::test::remove_jack_leftovers(jack_name_);
}

bool Soak::start_server() {
    // Quanta from 64 to 1024 frames, clocks from 100 ppm slow to 100 fast:
    // moves cross both. The last sink is the test sound card's (an ALSA
    // sink, paced by its own clock), where the build has it; the one
    // before a JACK sink on a dummy jackd, where JACK is installed.
    const int quanta[] = {64, 128, 256, 512, 1024};
    const int ppms[] = {0, -100, 50, 100, -50, 20};
    const int count = o_.streams + 4; // room to move into
    for (int i = 0; i < count; ++i) {
        // (Built by append: GCC 12 warns falsely of "s" + to_string.)
        std::string name = "s";
        name.append(std::to_string(i));
        sinks_.push_back({name, quanta[i % 5], ppms[i % 6]});
    }
    if (!card_dir_.empty()) {
        sinks_.back() = {"card", 256, 0, Sink::Type::card};
    }
    if (o_.jack && start_jack()) {
        sinks_[sinks_.size() - 2] = {"jack", 256, 0, Sink::Type::jack};
    }
    if (rtp_loop_wanted()) {
        // Below Linux's ephemeral ports (32768 up), which other programs'
        // sockets take.
        rtp_port_ = 20000 + 4 * (::getpid() % 3000);
        sinks_.push_back({"rtp-out", 256, 0, Sink::Type::rtp_out});
        sinks_.push_back({"rtp-land", 256, 0, Sink::Type::rtp_land});
    }
    write_config();
    listener_ = listen_at(dir_ + "/socket");
    return listener_ >= 0 && launch_server();
}

bool Soak::reload(const std::string& why) {
    std::string out;
    const double t = now_s();
    const bool ok = audioctl({"reload"}, &out);
    excuse(t, why);
    note("reload (" + why + "): " + out.substr(0, out.find('\n')));
    return ok;
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
    end_process(server_, 5000); // started, but never answered
    server_ = -1;
    return false;
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
    excuse(t, "server held", true);
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
    excuse(t, "server killed and restarted", true);
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
            return p.ended_s < 0 && (p.kind == Kind::pacat || p.kind == Kind::paplay);
        }));
    footprints_.push_back({now_s(), server_lives_, audiod::soak::footprint(server_),
                           audiod::soak::descriptor_kinds(server_), pacats});
}

} // namespace audiod::soak
