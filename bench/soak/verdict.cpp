// The verdict: every stream's runs judged against the events, the
// footprint's growth, the log's complaints; the summary.
#include "soak.h"

#include <algorithm>
#include <array>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>

namespace audiod::soak {

using test::Cause;
using test::Run;

namespace {

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

} // namespace

int Soak::verdict() {
    // Each run belongs to the life of its number that was playing then.
    std::vector<Run> runs;
    uint64_t stray = 0, read = 0, silent = 0, echo_checked = 0;
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
            const bool echo = r->sink() == "rtp-land";
            run.stream = echo ? kEchoLife + life : life;
            if (echo) {
                echo_checked += run.last - run.first + 1;
            }
            runs.push_back(run);
        }
    }
    // The echo's numbers come through the relay's losses, concealment
    // (the packet before, fading) and, whenever the jitter buffer's
    // latency leaves its dead band, the source's resampler following the
    // sender: its gaps are not judged frame by frame (that needs the sync
    // probe's ramp, which survives a resampler), only counted. What of it
    // reads must still read once and in order: no number twice.
    for (const Player& p : players_) {
        if (p.rtp) {
            causes_.push_back({kEchoLife + p.life, "", p.started_s - 1,
                               (p.ended_s < 0 ? now_s() : p.ended_s) + 1,
                               "RTP echo: lost, concealed or resampled"});
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
    uint64_t echo_unread = 0;
    for (const auto& gap : v.gaps) {
        echo_unread += gap.stream >= kEchoLife ? gap.frames : 0;
    }
    if (rtp_port_ == 0) {
        std::printf("RTP loop: not run (no audiod-udp-relay: a build without the tests)\n");
    } else {
        std::printf("RTP loop: the echo on rtp-land read %llu frames once and in order, %llu not "
                    "(lost, concealed, resampled); the relay: %s\n",
                    static_cast<unsigned long long>(echo_checked),
                    static_cast<unsigned long long>(echo_unread), relay_said_.c_str());
        if (echo_checked == 0) {
            failures.push_back("the RTP loop's echo was never heard");
        }
    }
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
            // Where the server last said it played, for whoever looks into it.
            std::string where = std::string(kind_name(p.kind)) + ", last on " + p.sink;
            if (p.stream_id != 0) {
                where += " as stream " + std::to_string(p.stream_id);
            }
            failures.push_back("life " + std::to_string(p.life) + " (" + p.app + ", " + where +
                               ") played for " + std::to_string(int(end - p.started_s)) +
                               " s and none of it was heard at full volume alone on a sink");
        }
    }
    // Resources: flat after each server's warm-up (30 s).
    const double warm = 30;
    const double fd_slope = slope_per_minute(footprints_, warm, [](auto& f) { return f.fds; });
    const double thread_slope =
        slope_per_minute(footprints_, warm, [](auto& f) { return f.threads; });
    const double rss_slope =
        slope_per_minute(footprints_, warm, [](auto& f) { return f.anon_kib / 1024.0; });
    if (!footprints_.empty()) {
        const Footprint& a = footprints_.front().footprint;
        const Footprint& b = footprints_.back().footprint;
        std::printf("server: fds %ld -> %ld (%+.2f/min), threads %ld -> %ld (%+.2f/min), heap "
                    "(anonymous RSS) %.1f "
                    "-> %.1f MiB (%+.3f MiB/min), each of %d servers after %.0f s of warm-up\n",
                    a.fds, b.fds, fd_slope, a.threads, b.threads, thread_slope, a.anon_kib / 1024.0,
                    b.anon_kib / 1024.0, rss_slope, server_lives_, warm);
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
        failures.push_back("the heap grows by " + std::to_string(rss_slope) + " MiB a minute");
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
    failures.insert(failures.end(), failures_.begin(), failures_.end());
    // The state file (per-application settings, written as the soak moves
    // and sets volumes) must survive every kill: a server that finds it
    // corrupt moves it aside.
    if (std::filesystem::exists(dir_ + "/state.corrupt")) {
        failures.push_back("the server found its state file corrupt after a kill");
    }
    if (v.frames_checked == 0) {
        failures.push_back("nothing was checked");
    }
    if (const int complaints = unexplained_complaints(); complaints > 0) {
        failures.push_back(std::to_string(complaints) +
                           " warnings or errors in the server's log that no fault explains");
    }
    for (const std::string& f : failures) {
        std::printf("FAILED: %s\n", f.c_str());
    }
    std::printf("reproduce: audiod-soak --minutes %g --seed %u --streams %d%s\n", o_.minutes,
                o_.seed, o_.streams,
                o_.pipewire ? " --server pipewire"
                : o_.common ? " --events common"
                            : "");
    return failures.empty() ? 0 : 1;
}

int Soak::unexplained_complaints() {
    int unexplained = 0, stalls = 0, excused = 0;
    for (const LogWatch::Line& line : log_->complaints()) {
        const auto excuse = std::find_if(excuses_.begin(), excuses_.end(), [&](const Excuse& e) {
            return line.at_s >= e.from_s && line.at_s <= e.to_s && (e.held || !line.stall);
        });
        stalls += line.stall ? 1 : 0;
        if (excuse != excuses_.end()) {
            ++excused;
            continue;
        }
        if (++unexplained <= 10) {
            std::printf("LOG without a cause at %.2f s: %s\n", line.at_s, line.text.c_str());
            for (const auto& [at, what] : journal_) {
                if (at > line.at_s - 3 && at < line.at_s + 1) {
                    std::printf("  %8.2f s  %s\n", at, what.c_str());
                }
            }
        }
    }
    std::printf("log: %llu lines, %d warnings or errors during faults, %d without one; RT threads "
                "that completed no cycle within the watchdog's bound: %d (held servers excused)\n",
                static_cast<unsigned long long>(log_->lines()), excused, unexplained, stalls);
    return unexplained;
}

int Soak::finish(int server_status) {
    int result = verdict();
    if (!footprints_.empty()) {
        std::printf("the server's descriptors at the end:");
        for (const auto& [kind, count] : footprints_.back().descriptors) {
            std::printf(" %s %d,", kind.c_str(), count);
        }
        std::printf("\n");
    }
    if (server_status != 0) {
        std::printf("FAILED: the server's exit status was %d\n", server_status);
        result = 1;
    }
    // A sanitizer's report, in the server's log or the players', fails
    // the run.
    int reports = 0;
    for (const char* name : {"audiod.log", "players.log"}) {
        std::ifstream log(dir_ + "/" + name);
        for (std::string line; std::getline(log, line);) {
            const bool report = line.find("ERROR: AddressSanitizer") != std::string::npos ||
                                line.find("ERROR: LeakSanitizer") != std::string::npos ||
                                line.find("runtime error:") != std::string::npos ||
                                line.find("WARNING: ThreadSanitizer") != std::string::npos;
            if (report && ++reports <= 10) {
                std::printf("%s: %s\n", name, line.c_str());
            }
        }
    }
    if (reports > 0) {
        std::printf("FAILED: %d sanitizer reports (see above)\n", reports);
        result = 1;
    }
    if (!o_.keep.empty()) {
        keep_files();
    }
    std::filesystem::remove_all(dir_);
    std::printf("%s\n", result == 0 ? "soak passed" : "soak FAILED");
    return result;
}

void Soak::keep_files() {
    std::filesystem::create_directories(o_.keep);
    std::ofstream samples(o_.keep + "/footprints");
    for (const Sampled& f : footprints_) {
        samples << f.at_s << " server " << f.server << " pacats " << f.pacats << " fds "
                << f.footprint.fds << " threads " << f.footprint.threads << " anon-kib "
                << f.footprint.anon_kib;
        for (const auto& [kind, count] : f.descriptors) {
            samples << " " << kind << "=" << count;
        }
        samples << "\n";
    }
    std::ofstream journal(o_.keep + "/events");
    for (const auto& [at, what] : journal_) {
        journal << at << " " << what << "\n";
    }
    std::ofstream complaints(o_.keep + "/complaints");
    for (const LogWatch::Line& line : log_->complaints()) {
        complaints << line.at_s << " " << line.text << "\n";
    }
    for (const std::string f : {"audiod.conf", "audiod.log", "players.log", "jackd.log",
                                "relay.log", "stacks-1", "stacks-2"}) {
        if (std::filesystem::exists(dir_ + "/" + f)) {
            std::filesystem::copy_file(dir_ + "/" + f, o_.keep + "/" + f,
                                       std::filesystem::copy_options::overwrite_existing);
        }
    }
}

} // namespace audiod::soak
