// The soak's parts: what it runs (players, the server's lives), the events
// it fires and the verdict it reaches (bench/soak/README.md). One Soak
// runs once; its methods are spread by concern over soak.cpp (the loop),
// players.cpp, server_life.cpp, events.cpp, sink_faults.cpp and
// verdict.cpp.
#pragma once

#include "log_watch.h"
#include "processes.h"
#include "recorder.h"
#include "support/numbered_frames.h"
#include "support/stream_ledger.h"

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <random>
#include <string>
#include <sys/types.h>
#include <utility>
#include <vector>

namespace audiod::soak {

using Clock = std::chrono::steady_clock;

struct Options {
    double minutes = 60;
    uint32_t seed = 1;
    int streams = 32;
    std::string bin;
    std::string keep;
    std::string preload;       // LD_PRELOAD for aplay (a sanitizer build's plugin)
    bool pipewire = false;     // --server pipewire
    bool common = false;       // only the events both servers can do
    bool jack = true;          // a JACK sink on a dummy jackd, where JACK is installed
    std::string pipewire_alsa; // the root PipeWire's ALSA plugin is under
};

// How a player reaches the server.
enum class Kind {
    libaudiod, // audiod-test-client
    aplay,     // aplay through the ALSA plugin
    pacat,     // pacat through the PulseAudio-protocol server
    paplay,    // paplay of a WAV file (20-60 s) through that server: ends by itself
    pwcat,     // against PipeWire, its own client: pw-cat
};

const char* kind_name(Kind kind);

// The node properties of a PipeWire client of the soak, application
// `app`. Each life is an application of its own, as it is for audiod: no
// volume, mute or sink of another life is restored to it. WirePlumber's
// restore-stream remembers those by the media role first, and pw-cat
// gives every stream the role "Music": one pw-cat life's volume, mute or
// move came back on the next pw-cat's stream. So the role is the life's
// too. (WirePlumber 0.4 reads its state.restore-props as a boolean of
// its own rules only; a node's "false" is a string, and not heeded.)
std::string pipewire_properties(const std::string& app, const std::string& more = "");

// pw-cat's command (pw-record's is pw-cat's --record) for the soak's one
// format, 48 kHz stereo s16 on stdin or stdout, on `target`, as
// application `app` with pipewire_properties(app, more).
std::vector<std::string> pw_cat_command(const char* mode, const std::string& target,
                                        const std::string& app, const std::string& more = "");

// A player: one life of a numbered stream (its number 1..63 is reused by
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
    pid_t feeder = -1;  // what feeds aplay or pacat its frames
    double plays_s = 0; // paplay: its file's length
    bool rtp = false;   // plays into the RTP loop: no event moves, mutes or ends it
};

// A sample of the server's footprint: when, and which server (each
// restart starts afresh).
struct Sampled {
    double at_s;
    int server;
    Footprint footprint;
    std::map<std::string, int> descriptors; // by kind
    int pacats; // PulseAudio-protocol players then: each holds a descriptor more
};

struct Sink {
    enum class Type {
        null,
        card,     // the test sound card's ALSA sink, paced by the card's clock
        jack,     // a JACK sink on a dummy jackd, driven by JACK's periods
        rtp_out,  // the RTP loop's sender, through a lossy relay ...
        rtp_land, // ... to an RTP source that plays on this null sink
    };
    std::string name;
    int quantum;
    int ppm;
    Type type = Type::null;
    bool gone = false; // unloaded and not loaded again: no event picks it
};

// A change to undo later (a volume back to unity, a player continued).
struct Pending {
    double at_s;
    std::function<void()> undo;
};

// A time when the server's log may complain: a fault the soak made.
struct Excuse {
    double from_s;
    double to_s;
    std::string why;
    bool held; // the server was held or killed: RT stalls excused too
};

// The RTP loop's echo of life L is judged as life kEchoLife + L: the same
// numbers, heard again on rtp-land.
inline constexpr uint32_t kEchoLife = 1u << 20;

// Where the server's default sink is: no player is placed there, so that
// a sink taken away (unloaded, its card unplugged) has somewhere to send
// its stream that mixes it with no other.
inline constexpr const char* kFallbackSink = "fallback";

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
    void note(const std::string& what) { journal_.emplace_back(now_s(), what); }
    // The log may complain from `from_s` to a few seconds past now.
    void excuse(double from_s, const std::string& why, bool held = false) {
        excuses_.push_back({from_s - 0.5, now_s() + 3, why, held});
    }
    double uniform(double low, double high) {
        return std::uniform_real_distribution<double>(low, high)(rng_);
    }

    // pipewire_server.cpp
    bool start_pipewire();
    void stop_pipewire();
    void stop_bus();
    bool pactl_command(const std::vector<std::string>& args, std::string& out);

    // server_life.cpp
    void write_config();
    bool start_jack();
    void stop_jack();
    bool start_server();
    bool launch_server();
    bool reload(const std::string& why);
    void hold_server();
    void restart_server();
    void settle(double since, const std::string& why);
    void sample();

    // players.cpp
    Player* start_player(const std::string& sink, Kind kind);
    // The RTP loop: a relay between rtp-out and the source that plays on
    // rtp-land, and a player on rtp-out (rtp_loop.cpp).
    bool rtp_loop_wanted() const;
    void start_rtp_loop();
    void stop_rtp_loop();
    Kind next_kind();
    void reap_players();
    void end_player(Player& p);
    void remove_file_of(const Player& p); // a paplay's WAV
    void find_stream_ids();
    std::string free_sink(bool at_unity = false);
    Player* random_player(bool listed, const std::function<bool(const Player&)>& also = {});
    Player* player_on(const std::string& sink);
    // Whether a life's or a sink's gain is other than unity (ramps
    // included) at `t`: its frames then read only by count, and a run
    // cut by a move there could not be told from a loss, so moves wait.
    bool altered(const Player& p, double t) const;
    bool altered(const std::string& sink, double t) const;

    // events.cpp
    void event();
    void move_stream();
    void lower_stream(double hold);
    void lower_app(double hold);
    void lower_sink(double hold);
    void mute_stream(double hold);
    void mute_sink(double hold);
    void stop_player(double hold);
    void replace_player();
    // Runs `audioctl COMMAND TARGET ON` now and `... OFF` in `hold`
    // seconds; true if the server took the first.
    bool for_a_while(const std::string& command, const std::string& target, const std::string& on,
                     const std::string& off, double hold, const std::string& event_name);

    // sink_faults.cpp: sinks taken away and given back
    void unload_sink(double hold);
    void change_quantum();
    void card_fault(double hold);
    // A null sink, drawn from the seed.
    const Sink& random_null_sink();
    // A sink any event may touch (not the RTP loop's), drawn from the seed.
    const Sink& random_sink();
    // Stops the recording of SINK (its monitor would follow the streams
    // rescued to the fallback sink and record them twice) and starts it
    // again once SINK runs again.
    void stop_recording(const std::string& sink);
    bool resume_recording(const std::string& sink, int limit_ms);
    void sink_returned(const std::string& sink, double since, const std::string& why,
                       uint32_t life);
    bool sink_running(const std::string& sink);

    // verdict.cpp
    int verdict();
    int finish(int server_status);
    // The log's complaints that no fault explains (a stall: only a held
    // or killed server does); printed, and counted.
    int unexplained_complaints();
    void keep_files();

    Options o_;
    std::mt19937 rng_;
    Clock::time_point start_ = Clock::now();
    std::string dir_;
    std::string card_dir_;  // the fake card's fault files
    std::string jack_name_; // the dummy jackd's, if one runs
    pid_t jackd_ = -1;
    std::vector<pid_t> helpers_; // PipeWire's: the bus, WirePlumber, pipewire-pulse
    pid_t relay_ = -1;           // the RTP loop's
    int rtp_port_ = 0;           // the relay listens here; the source at + 2
    std::string relay_said_;     // its account, at the end
    pid_t server_ = -1;
    int listener_ = -1;
    int players_log_fd_ = -1; // the players' standard error
    std::string self_;
    std::vector<Sink> sinks_;
    std::vector<Player> players_; // every life, in order
    std::vector<double> last_end_of_number_ =
        std::vector<double>(test::kMaxNumberedStream + 1, -1e9);
    uint32_t lives_ = 0;
    std::vector<Pending> pending_;
    std::vector<test::Cause> causes_;
    std::map<std::string, int> events_;
    std::vector<std::pair<double, std::string>> journal_; // what was done, when
    test::LatestNumbers latest_{};
    std::vector<std::unique_ptr<Recorder>> recorders_; // ended ones too
    std::vector<Sampled> footprints_;
    int server_lives_ = 1;
    std::map<uint32_t, double> life_altered_until_;
    double last_restart_s_ = -1e9;
    std::vector<std::string> player_failures_;
    std::map<std::string, double> sink_altered_until_;
    int failed_commands_ = 0;
    std::vector<std::string> refusals_; // the first few, for the summary
    std::unique_ptr<LogWatch> log_;
    std::vector<std::string> failures_; // found while running
    std::vector<Excuse> excuses_;
    int changed_quantum_ = -1; // the sink whose quantum a reload changed, or -1
    int stack_dumps_ = 0;
};

} // namespace audiod::soak
