// The events: one a second, drawn from the seed. Each is undone by itself
// (a volume back at unity, a player continued) after a hold of 0.3-2 s,
// and leaves a cause for what its streams lose meanwhile.
#include "soak.h"

#include <csignal>

namespace audiod::soak {

void Soak::event() {
    const int roll = std::uniform_int_distribution<int>(0, 99)(rng_);
    const double hold = uniform(0.3, 2.0);
    if (o_.common) {
        // What PipeWire can be asked too (pactl): no application volume,
        // holds, sinks taken away or reloads.
        if (roll < 30) {
            move_stream();
        } else if (roll < 45) {
            lower_stream(hold);
        } else if (roll < 50) {
            lower_sink(hold);
        } else if (roll < 60) {
            mute_stream(hold);
        } else if (roll < 65) {
            mute_sink(hold);
        } else if (roll < 78) {
            stop_player(hold);
        } else {
            replace_player();
        }
        return;
    }
    if (roll < 27) {
        move_stream();
    } else if (roll < 40) {
        lower_stream(hold);
    } else if (roll < 46) {
        lower_app(hold);
    } else if (roll < 50) {
        lower_sink(hold);
    } else if (roll < 59) {
        mute_stream(hold);
    } else if (roll < 63) {
        mute_sink(hold);
    } else if (roll < 73) {
        stop_player(hold);
    } else if (roll < 76) {
        hold_server();
    } else if (roll < 78) {
        unload_sink(hold);
    } else if (roll < 80) {
        card_fault(hold);
    } else if (roll < 81) {
        change_quantum();
    } else {
        replace_player();
    }
}

bool Soak::for_a_while(const std::string& command, const std::string& target, const std::string& on,
                       const std::string& off, double hold, const std::string& event_name) {
    if (!audioctl({command, target, on})) {
        return false;
    }
    note(command + " " + target + " " + on + " for " + std::to_string(hold) + " s");
    ++events_[event_name];
    pending_.push_back({now_s() + hold, [this, command, target, off] {
                            note(command + " " + target + " " + off);
                            audioctl({command, target, off});
                        }});
    return true;
}

void Soak::move_stream() {
    const double t = now_s();
    Player* p = random_player(true, [&](const Player& q) { return !altered(q, t); });
    const std::string to = free_sink(true);
    if (p != nullptr && !to.empty() &&
        audioctl({"move-stream", std::to_string(p->stream_id), to})) {
        note("move life " + std::to_string(p->life) + " (stream " + std::to_string(p->stream_id) +
             ") " + p->sink + " -> " + to);
        p->sink = to;
        ++events_["move"];
    }
}

// A volume other than unity: the life's (or the sink's) frames read by
// count only, and moves wait, until its ramp back is over.
void Soak::lower_stream(double hold) {
    if (Player* p = random_player(true)) {
        if (for_a_while("set-volume", std::to_string(p->stream_id), "50%", "100%", hold,
                        "stream volume")) {
            life_altered_until_[p->life] = now_s() + hold + 0.5;
        }
    }
}

void Soak::lower_app(double hold) {
    if (Player* p =
            random_player(true, [](const Player& q) { return q.kind == Kind::libaudiod; })) {
        if (for_a_while("set-volume", "app:" + p->app, "70%", "100%", hold, "app volume")) {
            life_altered_until_[p->life] = now_s() + hold + 0.5;
        }
    }
}

void Soak::lower_sink(double hold) {
    const std::string sink = random_sink().name;
    if (for_a_while("set-volume", "sink:" + sink, "80%", "100%", hold, "sink volume")) {
        sink_altered_until_[sink] = now_s() + hold + 0.5;
    }
}

// Muted frames are played as silence: what is lost meanwhile has a cause.
void Soak::mute_stream(double hold) {
    const double t = now_s();
    if (Player* p = random_player(true)) {
        if (for_a_while("mute", std::to_string(p->stream_id), "on", "off", hold, "stream mute")) {
            causes_.push_back({p->life, "", t - 0.5, t + hold + 0.5, "stream muted"});
        }
    }
}

void Soak::mute_sink(double hold) {
    const double t = now_s();
    const std::string sink = random_sink().name;
    if (for_a_while("mute", "sink:" + sink, "on", "off", hold, "sink mute")) {
        causes_.push_back({0, sink, t - 0.5, t + hold + 0.5, "sink " + sink + " muted"});
    }
}

void Soak::stop_player(double hold) {
    Player* p = random_player(false);
    if (p == nullptr) {
        return;
    }
    const double t = now_s();
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

// A player killed, and a new client started in its place on a sink no
// one plays on.
void Soak::replace_player() {
    if (Player* p = random_player(false)) {
        note("SIGKILL life " + std::to_string(p->life) + " on " + p->sink);
        end_player(*p);
        ++events_["player killed"];
    }
    start_player(free_sink(), next_kind());
}

} // namespace audiod::soak
