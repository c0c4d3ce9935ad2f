// Small helpers shared by the integration tests.
#pragma once

#include "common/audio_file.h"
#include "process.h"
#include "server_state.h"
#include "support/tone_analysis.h"

#include <cstdint>
#include <functional>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

namespace audiod::test {

// The samples of a 16-bit audio file: WAV, FLAC... (fails the test if
// unreadable or of another format).
std::vector<int16_t> read_wav_s16(const std::string& path);
// The samples of a float audio file, and its format if asked.
std::vector<float> read_wav_f32(const std::string& path, AudioFormat* format = nullptr);

// Writes PATH: 48 kHz stereo s16 of a fixture signal ("sequence",
// "counter"...; see fixtures/fixture_signals.h). Returns PATH.
std::string write_signal_wav(const std::string& path, const std::string& signal, uint64_t frames);
// A stereo f32 sine at `hz`, amplitude 0.5, interleaved.
std::vector<float> tone_samples(uint32_t rate, double hz, double seconds);
// Writes PATH: tone_samples() as a WAV file. Returns PATH.
std::string write_tone_wav(const std::string& path, uint32_t rate, double hz, double seconds);

// Raw native float samples (a recorder's output) as floats; a torn last
// sample is left out.
std::vector<float> float_samples(const std::string& raw);

// The unsigned integer after "KEY": in a JSON text, or nullopt.
std::optional<uint64_t> json_number(const std::string& json, const std::string& key);
// The same for any number (sign, fraction), e.g. "seconds":2.98.
std::optional<double> json_real(const std::string& json, const std::string& key);

// A configuration with one file sink NAME writing PATH, plus `extra` TOML.
std::string file_sink_config(const std::string& path, uint32_t quantum = 256,
                             const std::string& extra = "");

// A program installed on the system, found on $PATH (the test command
// installs them all: a missing one fails the test).
std::string installed(const std::string& name);

// Runs a tool from bin/ with arguments; see run_program.
ProgramResult run_tool(const std::string& tool, const std::vector<std::string>& args,
                       std::chrono::milliseconds limit = std::chrono::seconds(30));

// Index of the first frame whose first channel is not zero, or nullopt.
std::optional<size_t> first_sound(const std::vector<int16_t>& samples, uint32_t channels);

// Waits until `audioctl --json list streams` shows a stream; returns its id.
std::optional<uint32_t> wait_for_stream(std::chrono::milliseconds limit);

// The frames stream ID has played (recorded, for a record stream) so far, as
// `audioctl --json list streams` shows it, or nullopt if there is no such stream.
std::optional<uint64_t> stream_position(uint32_t id);
// Waits until stream ID's position reaches `frames`; false if it ends first
// or `limit` passes. Tests that act while a stream plays wait for this
// event, never for a guessed wall-clock schedule.
bool wait_for_position(uint32_t id, uint64_t frames,
                       std::chrono::milliseconds limit = std::chrono::seconds(30));
// Waits until stream ID has played `frames` more than it had on entry.
bool wait_for_more(uint32_t id, uint64_t frames,
                   std::chrono::milliseconds limit = std::chrono::seconds(30));

// Ends a recorder started without a duration (audiorec, arecord), as Ctrl-C
// would, once its record stream ID has taken `margin` more frames from its
// source: more than the recorder buffers (audiorec's default 200 ms; tests
// that compare every frame give it kExactRecorderMs and kExactMargin), so
// all audio up to the call is in its file.
ProgramResult stop_recording(BackgroundProgram& recorder, uint32_t id, uint64_t margin = 24000);
// A recorder whose every frame matters buffers a second, so that a loaded
// machine's scheduling seldom makes it overrun; stopping it then waits 1.5 s.
inline const std::string kExactRecorderMs = "1000";
inline constexpr uint64_t kExactMargin = 72000;

// The overruns audiorec reports on leaving ("N frames recorded, M
// overruns"; not with --quiet).
uint64_t overruns_reported(const std::string& audiorec_stderr);

// `seconds` of SOURCE recorded by audiorec into FILE with a buffer of
// kExactRecorderMs (and the arguments in `more`), for a test that judges
// every frame. A buffer makes an overrun unlikely, not impossible: a TSan
// recorder beside the suite and stress-ng was once held up for over two
// seconds, and its recording had a gap nothing before it had made. So a
// recording that overran is made again, up to `attempts` times; the caller
// judges every frame only of one with no overruns, and otherwise only how
// much came through.
struct ExactRecording {
    ProgramResult result;
    uint64_t overruns = 0;
    int attempts = 0;
};
ExactRecording record_exactly(const std::string& source, int seconds, const std::string& file,
                              const std::vector<std::string>& more = {}, int attempts = 3);
// Likewise, a player whose every frame matters buffers two seconds.
inline const std::string kExactPlayerMs = "2000";

// An audiod-test-client that plays until the test says so (up to a minute of
// its signal), for a test that acts while a stream plays: no step of the
// test, however slow, can outlive the stream. `args` are the client's own
// (--signal, --app, --sink ...).
class PlayingClient {
public:
    explicit PlayingClient(std::vector<std::string> args);
    PlayingClient(const PlayingClient&) = delete;
    pid_t pid() const { return program_->pid(); }
    const BackgroundProgram& program() const { return *program_; }
    // Ends the stream at the client's next chunk; it drains, reports (the
    // JSON line with "written", "underruns"...) and exits.
    ProgramResult stop(std::chrono::milliseconds limit = std::chrono::seconds(60));
    // The same, for a stream that must have played cleanly: the client
    // exits 0 and never underran (fails the test otherwise).
    ProgramResult stop_without_underruns();

private:
    TempDir dir_; // holds the stop file
    std::unique_ptr<BackgroundProgram> program_;
};

// audiorec recording into FILE until stop(), with `args` (--source,
// --format, --latency-ms ...), as application APP; the constructor waits
// for its record stream.
class Recording {
public:
    Recording(const std::string& file, std::vector<std::string> args,
              const std::string& app = "rec");
    Recording(const Recording&) = delete;
    pid_t pid() const { return program_.pid(); }
    uint32_t id() const { return id_; }
    // stop_recording() with this recording's stream.
    ProgramResult stop(uint64_t margin = 24000) { return stop_recording(program_, id_, margin); }

private:
    BackgroundProgram program_;
    uint32_t id_ = 0;
};

// Creates (or rewrites) a small file at PATH: the signal that fault files
// of the test card and --stop-file of the test client wait for.
void touch(const std::string& path);

// Waits until `audioctl --json list streams` shows a stream of application
// APP; returns its id.
std::optional<uint32_t>
wait_for_app_stream(const std::string& app,
                    std::chrono::milliseconds limit = std::chrono::seconds(30));
// The ids of every stream of application APP listed now (a player whose
// library re-created its stream may have an old one still listed beside
// the new, e.g. on a sink whose thread is stuck).
std::vector<uint32_t> app_streams(const std::string& app);
// A stream of APP that plays on SINK (24000 frames more within 5 s), found
// within 30 s: the one the test started, or one its library made anew when
// a stall went on for over half a second (which a sink's failure may take
// on a loaded machine).
std::optional<uint32_t> playing_on(const std::string& app, const std::string& sink);
// Why a program's stream is not there, for a failed wait: whether the
// program still runs and what it said, the streams and clients the server
// lists, and the server's log. Found out only when written to a stream: a
// check's message (BOOST_*_MESSAGE) is written out only if the check fails,
// and this one runs audioctl twice.
struct WhyNoStream {
    const BackgroundProgram& program;
    const ServerProcess& server;
};
std::ostream& operator<<(std::ostream& out, const WhyNoStream& why);
inline WhyNoStream why_no_stream(const BackgroundProgram& program, const ServerProcess& server) {
    return {program, server};
}

// Waits until a stream of APP has played (or recorded) `frames` frames;
// returns its id. For ALSA programs, which may open and close streams while
// they set up (the plugin closes its stream at hw_params and opens one at
// prepare), this is the stream that plays; for a libaudiod player whose
// stream was created anew (after a stall of the server), the new one.
std::optional<uint32_t> wait_for_playing(const std::string& app,
                                         std::chrono::milliseconds limit = std::chrono::seconds(30),
                                         uint64_t frames = 1);

// Polls `condition` until it holds or `limit` passes: at 20 ms first, less
// often as the wait goes on (up to every 250 ms).
bool eventually(const std::function<bool()>& condition, std::chrono::milliseconds limit);

// Runs `audioctl ARGS...` and fails the test (with audioctl's message)
// unless it succeeds.
void ctl_ok(const std::vector<std::string>& args);

// Waits until WATCH (a running `audioctl watch`) is subscribed: it prints
// nothing until an event comes, so a probe sink is loaded and unloaded
// (again, under another name) until one shows.
void wait_until_watching(const BackgroundProgram& watch);

// One field of a stream or sink as `audioctl --json list` shows it (string
// values without their quotes), or "" if there is no such stream or sink.
std::string stream_field(uint32_t id, const std::string& key);
std::string sink_field(const std::string& sink, const std::string& key);
// The same for an application (`audioctl --json list apps`).
std::string app_field(const std::string& app, const std::string& key);
// Waits until `audioctl list sinks` shows the sink in `state` ("running",
// "failed"), at most `limit`.
bool wait_for_sink_state(const std::string& sink, const std::string& state,
                         std::chrono::milliseconds limit);
// A numeric field of a sink (frames, xruns...), or 0 if there is none.
uint64_t sink_number(const std::string& sink, const std::string& key);
// The same for a source (`audioctl --json list sources`).
std::string source_field(const std::string& source, const std::string& key);
uint64_t source_number(const std::string& source, const std::string& key);

// Whether the machine kept real time around the RTP source `rx`: neither it
// nor any of `sinks` woke a whole cycle late (an xrun), it concealed no
// packet and none came after its time (late, overdue: its thread, or the
// sender's, was held up), its reader never had to re-align nor its player
// (if it has one) refill a queue that ran dry, and its clock loop saw no
// drift from a sender on this machine's clock (a receiving thread held up
// more and more — a sanitizer build on a loaded machine — reads as a slow
// sender). Otherwise a click, a gap or a wandering pitch
// is the machine's doing, not audiod's, and a test checks only that the
// sound got through; the reason is logged.
bool rtp_receiver_kept_time(const std::vector<std::string>& sinks);

// Whether a line of TABLE (`audiod --list-devices`, `audioctl list`...)
// starts with these whitespace-separated fields, where "#" stands for a
// number (digits and dots) and "#/#" for two.
bool has_row(const std::string& table, const std::vector<std::string>& fields);

// Points this process (and so the servers and tools it starts) at the test
// sound card (tests/fixtures/fake_card), with its fault files in DIR/card.
// Returns that directory.
std::string use_test_card(const TempDir& dir);

// The "sequence" signal's frame numbers heard in a stereo s16 WAV, with the
// silence between them: the longest gap (in frames) between two heard
// frames, and whether they only ever increase.
struct Heard {
    std::vector<uint64_t> values;
    size_t longest_gap = 0;
    bool increasing = true;
    std::string first_fall; // where it first did not increase: "frame F: V after P"
};
Heard hear_sequence(const std::string& wav);
// For a WAV in which one "counter" stream played among silent ones: checks
// that every non-silent frame is the counter's next value (none lost,
// repeated or altered; fails the test otherwise) and returns how many.
uint64_t counter_frames_heard(const std::string& wav);
// Whether frame numbers only ever increase: none played twice or out of
// order (frames may be missing).
bool only_increasing(const std::vector<uint64_t>& frames);
// How often a heard sequence skips frames between two heard ones.
size_t sequence_jumps(const Heard& heard);
// The sequence numbers of a "sequence" stream found in a WAV, in file order.
std::vector<uint64_t> sequence_in(const std::string& path);
// Each file holds an increasing run of the sequence; together, every number
// below `frames` exactly once (fails the test otherwise). Returns how many
// runs (stays on a sink) there were.
size_t check_split_sequence(const std::vector<std::vector<uint64_t>>& files, uint64_t frames);
// The frames a test client wrote (all of them played, since it drained).
uint64_t written_by(const ProgramResult& r);

// A tone heard in a float recording: where it sounded (first channel above
// 0.05), for how long, its frequency (the best fit within 1 % of the one
// expected: a receiver following another clock plays a little off), and
// its level and THD+N there, measured away from its edges.
// The first and last frame whose first channel is louder than 0.05; first
// is past the end (and last 0) when nothing is.
struct LoudSpan {
    size_t first = 0;
    size_t last = 0;
    [[nodiscard]] bool sounded() const { return first < last; }
};
LoudSpan loud_span(const std::vector<float>& samples, uint32_t channels);

struct HeardTone {
    size_t first = 0; // frames
    size_t last = 0;
    double seconds = 0;
    double frequency = 0;
    size_t longest_quiet = 0; // frames: a gap inside the tone (a sine's own is 1)
    ToneMeasure tone;
    // The median of the amplitudes fitted in its whole 100 ms windows, each
    // at its own frequency: its level where the tone itself played, which a
    // gap, a jump of phase or a step of pitch in some windows (a receiver
    // concealing late packets, re-aligning) does not pull down as it does
    // the one fit over the whole tone.
    double median_window_amplitude = 0;
};
// Fails the test if nothing sounded.
HeardTone hear_tone(const std::vector<float>& samples, uint32_t channels, uint32_t rate, double hz);

// The THD+N of a long tone whose pitch may move (a receiver locking to
// another clock): fitted in 100 ms windows, each at its own frequency, the
// residual and tone energies summed over all of them. Also the worst window.
struct TrackedTone {
    double thd_n_db = 0;
    double worst_window_db = -200;
};
TrackedTone track_tone(const std::vector<float>& samples, uint32_t channels, uint32_t rate,
                       double hz, size_t first, size_t last);
// Each whole 100 ms window of frames [first, last) fitted at its own
// frequency (within `spread` of `hz`, 5 % by default): a tone whose pitch
// steps (a receiver that changes its resampling rate) is clean in each
// window, where a gap or noise is not.
struct ToneWindow {
    double at = 0; // seconds after `first`
    double frequency = 0;
    ToneMeasure tone;
};
std::vector<ToneWindow> measure_tone_windows(const std::vector<float>& samples, uint32_t channels,
                                             uint32_t rate, double hz, size_t first, size_t last,
                                             double spread = 0.05);
// A line per window, for a failure's message.
std::string describe(const std::vector<ToneWindow>& windows);

// An even UDP port whose next port is free too, on IPv4 and IPv6 (RTP and
// its RTCP), different for each test process.
uint16_t free_udp_port_pair();
// Waits until something on this host listens on UDP `port` (a receiver we
// started has bound its socket): the event a sender test waits for.
bool wait_for_udp_listener(uint16_t port,
                           std::chrono::milliseconds limit = std::chrono::seconds(30));

} // namespace audiod::test
