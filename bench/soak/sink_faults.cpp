// Sinks taken away and given back: unloaded and loaded again, the test
// sound card's xruns, suspends and unplugs, a quantum changed by
// `audioctl reload`. A sink taken away sends its stream to the fallback
// sink (the default, where no player is placed), and takes it back when
// it returns; its recording is stopped meanwhile and started afresh, so
// that it does not follow its monitor to the fallback's and record the
// rescued stream twice.
#include "soak.h"

#include <fstream>
#include <sstream>
#include <thread>
#include <unistd.h>

namespace audiod::soak {

namespace {

void touch(const std::string& path) {
    std::ofstream(path).put('\n');
}

} // namespace

const Sink& Soak::random_null_sink() {
    for (int tries = 0; tries < 1000; ++tries) {
        const Sink& s = sinks_[std::uniform_int_distribution<size_t>(0, sinks_.size() - 1)(rng_)];
        if (s.type == Sink::Type::null && !s.gone) {
            return s;
        }
    }
    return sinks_.front();
}

const Sink& Soak::random_sink() {
    for (int tries = 0; tries < 1000; ++tries) {
        const Sink& s = sinks_[std::uniform_int_distribution<size_t>(0, sinks_.size() - 1)(rng_)];
        if (s.type != Sink::Type::rtp_out && s.type != Sink::Type::rtp_land && !s.gone) {
            return s;
        }
    }
    return sinks_.front();
}

bool Soak::sink_running(const std::string& sink) {
    std::string out;
    if (!audioctl({"list", "sinks"}, &out)) {
        return false;
    }
    std::istringstream lines(out);
    for (std::string line; std::getline(lines, line);) {
        std::istringstream words(line);
        std::string name, type, state;
        words >> name >> type;
        if (type == "*") { // the default sink's mark
            words >> type;
        }
        words >> state;
        if (name == sink) {
            return state == "running";
        }
    }
    return false;
}

void Soak::stop_recording(const std::string& sink) {
    for (auto& r : recorders_) {
        if (r->sink() == sink && !r->stopping()) {
            r->stop();
        }
    }
}

bool Soak::resume_recording(const std::string& sink, int limit_ms) {
    recorders_.push_back(std::make_unique<Recorder>(sink, latest_, start_));
    for (int waited = 0; waited < limit_ms; waited += 50) {
        if (recorders_.back()->recording()) {
            return true;
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    return false;
}

// Waits up to `limit_s` for `done`, asking every 100 ms.
template <class Done>
bool within(double limit_s, Done done) {
    for (double waited = 0; waited < limit_s; waited += 0.1) {
        if (done()) {
            return true;
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    return done();
}

// Took SINK away; it (and its recording) is back now, and the stream that
// played there has come back to it: what that stream lost meanwhile has
// `why` for a cause.
void Soak::sink_returned(const std::string& sink, double since, const std::string& why,
                         uint32_t life) {
    if (!within(20, [&] { return sink_running(sink); })) {
        failures_.push_back("sink " + sink + " did not run again after " + why + " at " +
                            std::to_string(int(since)) + " s");
    }
    if (!resume_recording(sink, 10000)) {
        failures_.push_back("the recording of " + sink + " did not start again");
    }
    if (life != 0) {
        for (Player& p : players_) {
            if (p.life == life && p.ended_s < 0) {
                p.stream_id = 0; // where it plays is read again
            }
        }
    }
    causes_.push_back({life, life == 0 ? sink : "", since - 0.5, now_s() + 2, why});
    excuse(since, why);
}

void Soak::unload_sink(double hold) {
    // Never two streams on the fallback: one there already waits.
    if (player_on(kFallbackSink) != nullptr) {
        return;
    }
    Sink& s = sinks_[size_t(&random_null_sink() - sinks_.data())];
    const double t = now_s();
    const Player* p = player_on(s.name);
    const uint32_t life = p != nullptr ? p->life : 0;
    stop_recording(s.name);
    if (!audioctl({"unload-sink", s.name})) {
        resume_recording(s.name, 10000);
        return;
    }
    note("unload sink " + s.name + (life != 0 ? " (life " + std::to_string(life) + ")" : "") +
         " for " + std::to_string(hold));
    ++events_["sink unloaded and loaded"];
    std::this_thread::sleep_for(std::chrono::duration<double>(hold));
    const int index = int(&s - sinks_.data());
    const int quantum = index == changed_quantum_ ? s.quantum * 2 : s.quantum;
    if (!audioctl({"load-sink", "null", s.name, "quantum=" + std::to_string(quantum),
                   "clock-ppm=" + std::to_string(s.ppm)})) {
        failures_.push_back("sink " + s.name + " could not be loaded again");
        // Its stream stays on the fallback sink: where it plays is read
        // again, and no event picks the sink any more.
        s.gone = true;
        for (Player& q : players_) {
            if (q.life == life && q.ended_s < 0) {
                q.stream_id = 0;
            }
        }
        return;
    }
    note("load sink " + s.name);
    sink_returned(s.name, t, "sink " + s.name + " unloaded", life);
}

void Soak::change_quantum() {
    // One null sink at a time runs at twice its quantum; a reload sets it
    // back, the next another. The sink reopens with its streams playing.
    const int before = changed_quantum_;
    changed_quantum_ = before >= 0 ? -1 : int(&random_null_sink() - sinks_.data());
    write_config();
    const std::string& name = sinks_[size_t(before >= 0 ? before : changed_quantum_)].name;
    if (reload("the quantum of " + name + " changed")) {
        ++events_["reload (a quantum changed)"];
    } else {
        failures_.push_back("a reload changing the quantum of " + name + " was refused");
    }
}

void Soak::card_fault(double hold) {
    if (card_dir_.empty()) {
        return;
    }
    const double t = now_s();
    const int roll = std::uniform_int_distribution<int>(0, 2)(rng_);
    if (roll == 0) {
        touch(card_dir_ + "/xrun");
        note("card xrun");
        ++events_["card xrun"];
        excuse(t, "card xrun");
        return;
    }
    if (roll == 1) {
        touch(card_dir_ + "/suspend");
        note("card suspended for " + std::to_string(hold));
        std::this_thread::sleep_for(std::chrono::duration<double>(hold));
        ::unlink((card_dir_ + "/suspend").c_str());
        note("card resumed");
        ++events_["card suspended"];
        excuse(t, "card suspended");
        return;
    }
    if (player_on(kFallbackSink) != nullptr) {
        return;
    }
    const Player* p = player_on("card");
    const uint32_t life = p != nullptr ? p->life : 0;
    stop_recording("card");
    touch(card_dir_ + "/unplug");
    note("card unplugged for " + std::to_string(hold));
    ++events_["card unplugged"];
    if (!within(10, [&] { return !sink_running("card"); })) {
        failures_.push_back("the card sink did not see its card unplugged at " +
                            std::to_string(int(t)) + " s");
    }
    std::this_thread::sleep_for(std::chrono::duration<double>(hold));
    ::unlink((card_dir_ + "/unplug").c_str());
    note("card plugged in");
    sink_returned("card", t, "card unplugged", life);
}

} // namespace audiod::soak
