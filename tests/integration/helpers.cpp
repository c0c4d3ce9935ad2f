#include "helpers.h"

#include "common/audio_file.h"
#include "fixtures/fixture_signals.h"

#include <boost/test/unit_test.hpp>

#include <algorithm>
#include <arpa/inet.h>
#include <cmath>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <filesystem>
#include <fstream>
#include <netinet/in.h>
#include <random>
#include <sstream>
#include <sys/file.h>
#include <sys/socket.h>
#include <thread>
#include <unistd.h>

namespace audiod::test {

namespace {

// Every sample of an audio file that a reader delivers in `format`.
template <class Sample>
std::vector<Sample> read_samples(const std::string& path, SampleFormat format,
                                 AudioFormat* file_format) {
    auto opened = AudioFileReader::open(path);
    if (auto* error = std::get_if<std::string>(&opened)) {
        BOOST_FAIL("cannot read " << path << ": " << *error);
    }
    auto& reader = std::get<AudioFileReader>(opened);
    BOOST_REQUIRE_MESSAGE(reader.format().format == format, path << " is " << reader.description());
    if (file_format != nullptr) {
        *file_format = reader.format();
    }
    const uint32_t channels = reader.format().channels;
    std::vector<Sample> samples;
    std::vector<Sample> chunk(size_t{4096} * channels);
    for (;;) {
        const long n = reader.read_frames(chunk.data(), 4096);
        BOOST_REQUIRE_GE(n, 0);
        if (n == 0) {
            break;
        }
        samples.insert(samples.end(), chunk.begin(), chunk.begin() + n * channels);
    }
    return samples;
}

} // namespace

std::vector<int16_t> read_wav_s16(const std::string& path) {
    return read_samples<int16_t>(path, SampleFormat::s16le, nullptr);
}

std::vector<float> read_wav_f32(const std::string& path, AudioFormat* format) {
    return read_samples<float>(path, SampleFormat::f32le, format);
}

namespace {

template <class Sample>
void write_wav(const std::string& path, const AudioFormat& format,
               const std::vector<Sample>& samples) {
    auto created = AudioFileWriter::create(path, format, Container::wav);
    BOOST_REQUIRE(std::holds_alternative<AudioFileWriter>(created));
    BOOST_REQUIRE_EQUAL(
        std::get<AudioFileWriter>(created).append(samples.data(), samples.size() * sizeof(Sample)),
        0);
    BOOST_REQUIRE_EQUAL(std::get<AudioFileWriter>(created).finish(), 0);
}

} // namespace

std::string write_signal_wav(const std::string& path, const std::string& signal, uint64_t frames) {
    write_wav(path, {SampleFormat::s16le, 48000, 2}, make_signal(signal, frames, 2, 0, 0));
    return path;
}

std::vector<float> float_samples(const std::string& raw) {
    std::vector<float> samples(raw.size() / sizeof(float));
    std::memcpy(samples.data(), raw.data(), samples.size() * sizeof(float));
    return samples;
}

std::vector<float> tone_samples(uint32_t rate, double hz, double seconds) {
    const auto frames = static_cast<size_t>(seconds * rate);
    std::vector<float> samples(frames * 2);
    for (size_t i = 0; i < frames; ++i) {
        samples[2 * i] = samples[2 * i + 1] =
            static_cast<float>(0.5 * std::sin(2 * M_PI * hz * double(i) / rate));
    }
    return samples;
}

std::string write_tone_wav(const std::string& path, uint32_t rate, double hz, double seconds) {
    write_wav(path, {SampleFormat::f32le, rate, 2}, tone_samples(rate, hz, seconds));
    return path;
}

namespace {

// Where the value of "key" starts in `json`, or null.
const char* json_value(const std::string& json, const std::string& key) {
    const std::string anchor = "\"" + key + "\":";
    const size_t at = json.find(anchor);
    return at == std::string::npos ? nullptr : json.c_str() + at + anchor.size();
}

} // namespace

std::optional<uint64_t> json_number(const std::string& json, const std::string& key) {
    const char* digits = json_value(json, key);
    if (digits == nullptr || *digits < '0' || *digits > '9') {
        return std::nullopt;
    }
    return std::strtoull(digits, nullptr, 10);
}

std::optional<double> json_real(const std::string& json, const std::string& key) {
    const char* start = json_value(json, key);
    char* end = nullptr;
    const double value = start != nullptr ? std::strtod(start, &end) : 0.0;
    if (start == nullptr || end == start) {
        return std::nullopt;
    }
    return value;
}

std::string file_sink_config(const std::string& path, uint32_t quantum, const std::string& extra) {
    return "[server]\nquantum = " + std::to_string(quantum) +
           "\nrt-priority = 0\n\n[sinks.out]\ntype = \"file\"\npath = \"" + path + "\"\n" + extra;
}

std::string installed(const std::string& name) {
    const char* path = std::getenv("PATH");
    std::string dirs = path != nullptr ? path : "/usr/bin:/bin";
    for (size_t start = 0; start <= dirs.size();) {
        const size_t end = std::min(dirs.find(':', start), dirs.size());
        const std::string candidate = dirs.substr(start, end - start) + "/" + name;
        if (::access(candidate.c_str(), X_OK) == 0) {
            return candidate;
        }
        start = end + 1;
    }
    BOOST_FAIL(name << " is not installed (scripts/install-deps test installs it)");
    return name;
}

ProgramResult run_tool(const std::string& tool, const std::vector<std::string>& args,
                       std::chrono::milliseconds limit) {
    std::vector<std::string> argv{bin(tool)};
    // audioctl gives up on a server after 2 s; a test's server may be that
    // slow to answer on a loaded machine under a sanitizer (a clean-clone
    // CI beside a package build lost two `list sources` that way), and
    // no test here is about audioctl's patience.
    if (tool == "audioctl") {
        argv.insert(argv.end(), {"--timeout", "10000"});
    }
    argv.insert(argv.end(), args.begin(), args.end());
    return run_program(argv, limit);
}

std::optional<size_t> first_sound(const std::vector<int16_t>& samples, uint32_t channels) {
    for (size_t f = 0; f < samples.size() / channels; ++f) {
        if (samples[f * channels] != 0) {
            return f;
        }
    }
    return std::nullopt;
}

std::optional<uint32_t> wait_for_stream(std::chrono::milliseconds limit) {
    std::optional<uint32_t> id;
    eventually(
        [&] {
            if (const auto n = json_number(list_json("streams"), "id")) {
                id = static_cast<uint32_t>(*n);
            }
            return id.has_value();
        },
        limit);
    return id;
}

namespace {

// The JSON objects of APP's streams in a `list streams` listing.
std::vector<std::string> app_stream_objects(const std::string& json, const std::string& app) {
    const std::string key = "\"app\":\"" + app + "\"";
    std::vector<std::string> objects;
    for (auto at = json.find(key); at != std::string::npos; at = json.find(key, at + 1)) {
        const auto begin = json.rfind('{', at);
        objects.push_back(json.substr(begin, json.find('}', at) - begin + 1));
    }
    return objects;
}

// The first stream of APP in a `list streams` JSON array whose position is
// at least `position`.
std::optional<uint32_t> stream_of(const std::string& json, const std::string& app,
                                  uint64_t position) {
    for (const std::string& object : app_stream_objects(json, app)) {
        if (json_number(object, "position").value_or(0) >= position) {
            return static_cast<uint32_t>(json_number(object, "id").value_or(0));
        }
    }
    return std::nullopt;
}

std::optional<uint32_t> wait_for_stream_of(const std::string& app, uint64_t position,
                                           std::chrono::milliseconds limit) {
    std::optional<uint32_t> id;
    eventually(
        [&] {
            id = stream_of(list_json("streams"), app, position);
            return id.has_value();
        },
        limit);
    return id;
}

} // namespace

std::optional<uint32_t> wait_for_app_stream(const std::string& app,
                                            std::chrono::milliseconds limit) {
    return wait_for_stream_of(app, 0, limit);
}

std::vector<uint32_t> app_streams(const std::string& app) {
    std::vector<uint32_t> ids;
    for (const std::string& object : app_stream_objects(list_json("streams"), app)) {
        ids.push_back(static_cast<uint32_t>(json_number(object, "id").value_or(0)));
    }
    return ids;
}

std::optional<uint32_t> playing_on(const std::string& app, const std::string& sink) {
    std::optional<uint32_t> found;
    eventually(
        [&] {
            for (const uint32_t id : app_streams(app)) {
                if (stream_field(id, "device") == sink &&
                    wait_for_more(id, 24000, std::chrono::seconds(5))) {
                    found = id;
                    return true;
                }
            }
            return false;
        },
        std::chrono::seconds(30));
    return found;
}

std::ostream& operator<<(std::ostream& out, const WhyNoStream& why) {
    return out << "the program " << (why.program.has_exited() ? "has ended" : "still runs")
               << "; its standard error:\n"
               << why.program.errors_so_far() << "the streams now:\n"
               << run_tool("audioctl", {"list", "streams"}).out << "the clients:\n"
               << run_tool("audioctl", {"list", "clients"}).out << "the server's log:\n"
               << why.server.log();
}

std::optional<uint32_t> wait_for_playing(const std::string& app, std::chrono::milliseconds limit,
                                         uint64_t frames) {
    return wait_for_stream_of(app, frames, limit);
}

bool eventually(const std::function<bool()>& condition, std::chrono::milliseconds limit) {
    // Conditions ask a server (list_json) or run a program (audioctl, 45-80
    // ms of CPU under a sanitizer): polled every 50 ms by four tests at
    // once, such probes took a large share of the two cores the sanitizer
    // steps have. So the interval grows from 20 ms, which catches a quick
    // event quickly, to 250 ms, which still answers a wait of seconds in
    // good time.
    const auto deadline = std::chrono::steady_clock::now() + limit;
    auto interval = std::chrono::milliseconds(20);
    while (std::chrono::steady_clock::now() < deadline) {
        if (condition()) {
            return true;
        }
        std::this_thread::sleep_for(interval);
        interval = std::min(interval * 3 / 2, std::chrono::milliseconds(250));
    }
    return condition();
}

void ctl_ok(const std::vector<std::string>& args) {
    const ProgramResult r = run_tool("audioctl", args);
    BOOST_REQUIRE_MESSAGE(r.status == 0, "audioctl " << args[0] << ": " << r.err);
}

void wait_until_watching(const BackgroundProgram& watch) {
    for (int i = 0;; ++i) {
        const std::string probe = "probe" + std::to_string(i);
        ctl_ok({"load-sink", "null", probe});
        ctl_ok({"unload-sink", probe});
        if (eventually([&] { return watch.output_so_far().find(probe) != std::string::npos; },
                       std::chrono::seconds(1))) {
            return;
        }
        BOOST_REQUIRE_MESSAGE(i < 30, "audioctl watch showed no event");
    }
}

namespace {

// The value of "key" in the object of a JSON array that starts at `anchor`.
std::string field_after(const std::string& json, const std::string& anchor,
                        const std::string& key) {
    const auto at = json.find(anchor);
    if (at == std::string::npos) {
        return "";
    }
    const auto k = json.find("\"" + key + "\":", at);
    if (k == std::string::npos || k > json.find('}', at)) {
        return "";
    }
    auto v = k + key.size() + 3;
    const bool quoted = json[v] == '"';
    v += quoted ? 1 : 0;
    return json.substr(v, json.find_first_of(quoted ? "\"" : ",}", v) - v);
}

} // namespace

std::string stream_field(uint32_t id, const std::string& key) {
    return field_after(list_json("streams"), "\"id\":" + std::to_string(id) + ",", key);
}

std::string sink_field(const std::string& sink, const std::string& key) {
    return field_after(list_json("sinks"), "\"name\":\"" + sink + "\"", key);
}

std::string app_field(const std::string& app, const std::string& key) {
    return field_after(list_json("apps"), "\"name\":\"" + app + "\"", key);
}

bool wait_for_sink_state(const std::string& sink, const std::string& state,
                         std::chrono::milliseconds limit) {
    return eventually([&] { return sink_field(sink, "state") == state; }, limit);
}

uint64_t sink_number(const std::string& sink, const std::string& key) {
    const std::string value = sink_field(sink, key);
    return value.empty() ? 0 : std::stoull(value);
}

std::string source_field(const std::string& source, const std::string& key) {
    return field_after(list_json("sources"), "\"name\":\"" + source + "\"", key);
}

uint64_t source_number(const std::string& source, const std::string& key) {
    const std::string value = source_field(source, key);
    return value.empty() ? 0 : std::stoull(value);
}

bool rtp_receiver_kept_time(const std::vector<std::string>& sinks) {
    const std::string drift = source_field("rx", "drift-ppm");
    bool kept = source_number("rx", "xruns") == 0 && source_number("rx", "lost") == 0 &&
                source_number("rx", "late") == 0 && source_number("rx", "overdue") == 0 &&
                source_number("rx", "resyncs") == 0 && source_number("rx", "play-refills") == 0 &&
                (drift.empty() || std::fabs(std::stod(drift)) < 100);
    for (const std::string& sink : sinks) {
        kept = kept && sink_number(sink, "xruns") == 0;
    }
    if (!kept) {
        BOOST_TEST_MESSAGE("devices were late (xruns, lost packets or drift): only the sound's "
                           "arrival is checked\n"
                           << run_tool("audioctl", {"list", "sinks"}).out
                           << run_tool("audioctl", {"list", "sources"}).out);
    }
    return kept;
}

std::optional<uint64_t> stream_position(uint32_t id) {
    const std::string position = stream_field(id, "position");
    if (position.empty()) {
        return std::nullopt;
    }
    return std::stoull(position);
}

bool wait_for_position(uint32_t id, uint64_t frames, std::chrono::milliseconds limit) {
    bool gone = false;
    const bool reached = eventually(
        [&] {
            // A look the server did not answer (busy past the probe's
            // patience, or its listening queue full) says nothing of the
            // stream: look again.
            const std::string streams = list_json("streams");
            if (streams.empty()) {
                return false;
            }
            const std::string position =
                field_after(streams, "\"id\":" + std::to_string(id) + ",", "position");
            gone = position.empty();
            return gone || std::stoull(position) >= frames;
        },
        limit);
    BOOST_TEST_MESSAGE("stream " << id << (gone ? " ended before frame " : " reached frame ")
                                 << frames);
    return reached && !gone;
}

bool wait_for_more(uint32_t id, uint64_t frames, std::chrono::milliseconds limit) {
    const auto now = stream_position(id);
    return now && wait_for_position(id, *now + frames, limit);
}

ProgramResult stop_recording(BackgroundProgram& recorder, uint32_t id, uint64_t margin) {
    BOOST_CHECK(wait_for_more(id, margin));
    ::kill(recorder.pid(), SIGINT);
    return recorder.finish(std::chrono::seconds(30));
}

uint64_t overruns_reported(const std::string& audiorec_stderr) {
    const std::string said = " frames recorded, ";
    const size_t at = audiorec_stderr.rfind(said);
    BOOST_REQUIRE_MESSAGE(at != std::string::npos, "audiorec said: " << audiorec_stderr);
    return std::stoull(audiorec_stderr.substr(at + said.size()));
}

ExactRecording record_exactly(const std::string& source, int seconds, const std::string& file,
                              const std::vector<std::string>& more, int attempts) {
    std::vector<std::string> args{"--source",       source,       "--latency-ms",
                                  kExactRecorderMs, "--duration", std::to_string(seconds)};
    args.insert(args.end(), more.begin(), more.end());
    args.push_back(file);
    ExactRecording recording;
    do {
        ++recording.attempts;
        recording.result = run_tool("audiorec", args, std::chrono::seconds(30 + seconds));
        BOOST_REQUIRE_MESSAGE(recording.result.status == 0, recording.result.err);
        recording.overruns = overruns_reported(recording.result.err);
        if (recording.overruns > 0 && recording.attempts < attempts) {
            BOOST_TEST_MESSAGE("the recorder overran " << recording.overruns
                                                       << " times: recording again");
        }
    } while (recording.overruns > 0 && recording.attempts < attempts);
    return recording;
}

PlayingClient::PlayingClient(std::vector<std::string> args) {
    args.insert(args.begin(), bin("audiod-test-client"));
    for (const char* extra : {"--frames", "2880000", "--stop-file"}) {
        args.emplace_back(extra);
    }
    args.push_back(dir_.file("stop"));
    program_ = std::make_unique<BackgroundProgram>(args);
}

ProgramResult PlayingClient::stop(std::chrono::milliseconds limit) {
    touch(dir_.file("stop"));
    return program_->finish(limit);
}

ProgramResult PlayingClient::stop_without_underruns() {
    const ProgramResult r = stop();
    BOOST_REQUIRE_MESSAGE(r.status == 0, "the test client failed: " << r.err);
    BOOST_CHECK_EQUAL(json_number(r.out, "underruns").value_or(99), 0u);
    return r;
}

namespace {

std::vector<std::string> audiorec_argv(const std::string& file, std::vector<std::string> args,
                                       const std::string& app) {
    args.insert(args.begin(), {bin("audiorec"), "--app", app});
    args.push_back(file);
    return args;
}

} // namespace

Recording::Recording(const std::string& file, std::vector<std::string> args, const std::string& app)
    : program_(audiorec_argv(file, std::move(args), app)) {
    const auto id = wait_for_app_stream(app);
    BOOST_REQUIRE_MESSAGE(id, "audiorec's stream never appeared");
    id_ = *id;
}

void touch(const std::string& path) {
    std::ofstream(path) << "x\n";
}

uint64_t counter_frames_heard(const std::string& wav) {
    const auto out = read_wav_s16(wav);
    uint64_t next = 0;
    for (size_t f = 0; f + 1 < out.size(); f += 2) {
        if (out[f] != 0) {
            BOOST_REQUIRE_EQUAL(out[f], counter_value(next++));
        }
    }
    return next;
}

Heard hear_sequence(const std::string& wav) {
    const auto samples = read_wav_s16(wav);
    Heard heard;
    size_t gap = 0;
    for (size_t f = 0; f < samples.size() / 2; ++f) {
        if (samples[2 * f] == 0 && samples[2 * f + 1] == 0) {
            ++gap;
            continue;
        }
        const uint64_t value = sequence_number(samples[2 * f], samples[2 * f + 1]);
        if (!heard.values.empty()) {
            heard.longest_gap = std::max(heard.longest_gap, gap);
            if (heard.increasing && value <= heard.values.back()) {
                heard.increasing = false;
                heard.first_fall = "frame " + std::to_string(f) + ": " + std::to_string(value) +
                                   " after " + std::to_string(heard.values.back());
            }
        }
        heard.values.push_back(value);
        gap = 0;
    }
    return heard;
}

bool only_increasing(const std::vector<uint64_t>& frames) {
    return std::adjacent_find(frames.begin(), frames.end(), std::greater_equal<>()) == frames.end();
}

size_t sequence_jumps(const Heard& heard) {
    size_t jumps = 0;
    for (size_t i = 1; i < heard.values.size(); ++i) {
        jumps += heard.values[i] != heard.values[i - 1] + 1 ? 1 : 0;
    }
    return jumps;
}

std::string use_test_card(const TempDir& dir) {
    const std::string card = dir.file("card");
    std::filesystem::create_directories(card);
    ::setenv("ALSA_CONFIG_PATH",
             (std::string(AUDIOD_BUILD_DIR) + "/tests/alsa/asound.conf").c_str(), 1);
    ::setenv("AUDIOD_TESTCARD_DIR", card.c_str(), 1);
    return card;
}

namespace {

// The frequency in [low, high] where `thd` (THD+N at a frequency) is least:
// a grid of `step`, then a golden-section search around the best point.
double best_frequency(const std::function<double(double)>& thd, double low, double high,
                      double step) {
    double best = low;
    double best_thd = thd(low);
    for (double f = low + step; f <= high; f += step) {
        if (const double t = thd(f); t < best_thd) {
            best = f;
            best_thd = t;
        }
    }
    double a = best - step;
    double b = best + step;
    const double golden = (std::sqrt(5.0) - 1) / 2;
    double x = b - golden * (b - a);
    double y = a + golden * (b - a);
    double tx = thd(x);
    double ty = thd(y);
    for (int i = 0; i < 30; ++i) {
        if (tx < ty) {
            b = y;
            y = x;
            ty = tx;
            x = b - golden * (b - a);
            tx = thd(x);
        } else {
            a = x;
            x = y;
            tx = ty;
            y = a + golden * (b - a);
            ty = thd(y);
        }
    }
    return (a + b) / 2;
}

} // namespace

LoudSpan loud_span(const std::vector<float>& samples, uint32_t channels) {
    LoudSpan span{samples.size() / channels, 0};
    for (size_t f = 0; f < samples.size() / channels; ++f) {
        if (std::fabs(samples[channels * f]) > 0.05f) {
            span.first = std::min(span.first, f);
            span.last = f;
        }
    }
    return span;
}

HeardTone hear_tone(const std::vector<float>& samples, uint32_t channels, uint32_t rate,
                    double hz) {
    HeardTone heard;
    const LoudSpan span = loud_span(samples, channels);
    heard.first = span.first;
    heard.last = span.last;
    BOOST_REQUIRE_MESSAGE(span.sounded(), "no tone was heard");
    heard.seconds = double(heard.last - heard.first + 1) / rate;
    size_t quiet = 0;
    for (size_t f = heard.first; f <= heard.last; ++f) {
        quiet = std::fabs(samples[channels * f]) < 0.02f ? quiet + 1 : 0;
        heard.longest_quiet = std::max(heard.longest_quiet, quiet);
    }
    const size_t edge = rate / 10;
    BOOST_REQUIRE_MESSAGE(heard.last - heard.first > 3 * edge, "the tone is too short to measure");
    const float* from = samples.data() + channels * (heard.first + edge);
    const size_t count = heard.last - heard.first - 2 * edge;
    const auto thd = [&](double f) {
        return measure_tone(from, count, channels, f, rate).thd_n_db;
    };
    heard.frequency = best_frequency(thd, hz * 0.99, hz * 1.01, 0.25);
    heard.tone = measure_tone(from, count, channels, heard.frequency, rate);
    std::vector<double> amplitudes;
    for (const ToneWindow& w : measure_tone_windows(samples, channels, rate, heard.frequency,
                                                    heard.first + edge, heard.last - edge)) {
        amplitudes.push_back(w.tone.amplitude);
    }
    std::sort(amplitudes.begin(), amplitudes.end());
    heard.median_window_amplitude = amplitudes.empty() ? 0 : amplitudes[amplitudes.size() / 2];
    BOOST_TEST_MESSAGE("tone: " << heard.seconds << " s at " << heard.frequency << " Hz, amplitude "
                                << heard.tone.amplitude << " (median of 100 ms windows "
                                << heard.median_window_amplitude << "), THD+N "
                                << heard.tone.thd_n_db << " dB, longest gap " << heard.longest_quiet
                                << " frames");
    return heard;
}

TrackedTone track_tone(const std::vector<float>& samples, uint32_t channels, uint32_t rate,
                       double hz, size_t first, size_t last) {
    // Each window finds its own pitch within ±0.5 % (it moves as a clock
    // loop learns).
    double residual = 0;
    double tone = 0;
    TrackedTone tracked;
    for (const ToneWindow& w :
         measure_tone_windows(samples, channels, rate, hz, first, last, 0.005)) {
        const double power = w.tone.amplitude * w.tone.amplitude / 2;
        tone += power;
        residual += power * std::pow(10.0, w.tone.thd_n_db / 10);
        tracked.worst_window_db = std::max(tracked.worst_window_db, w.tone.thd_n_db);
    }
    BOOST_REQUIRE(tone > 0);
    tracked.thd_n_db = 10 * std::log10(residual / tone);
    return tracked;
}

std::vector<ToneWindow> measure_tone_windows(const std::vector<float>& samples, uint32_t channels,
                                             uint32_t rate, double hz, size_t first, size_t last,
                                             double spread) {
    const size_t window = rate / 10;
    last = std::min(last, samples.size() / channels);
    std::vector<ToneWindow> windows;
    for (size_t at = first; at + window <= last; at += window) {
        const float* from = samples.data() + channels * at;
        const auto thd = [&](double f) {
            return measure_tone(from, window, channels, f, rate).thd_n_db;
        };
        ToneWindow w;
        w.at = double(at - first) / rate;
        // A 100 ms window's fit worsens steadily up to 10 Hz either side of
        // its tone, so a 2 Hz grid cannot miss the neighbourhood that the
        // search then narrows (a finer grid only cost time: with 0.5 Hz the
        // sanitizer builds spent a minute on the windows of a 20 s tone).
        w.frequency = best_frequency(thd, hz * (1 - spread), hz * (1 + spread), 2.0);
        w.tone = measure_tone(from, window, channels, w.frequency, rate);
        windows.push_back(w);
    }
    return windows;
}

std::string describe(const std::vector<ToneWindow>& windows) {
    std::ostringstream out;
    for (const ToneWindow& w : windows) {
        out << w.at << " s: " << w.frequency << " Hz, amplitude " << w.tone.amplitude << ", THD+N "
            << w.tone.thd_n_db << " dB\n";
    }
    return out.str();
}

namespace {

bool udp_port_free(int family, uint16_t port) {
    const int fd = ::socket(family, SOCK_DGRAM, 0);
    if (fd < 0) {
        return family == AF_INET6; // no IPv6 on this host: nothing to collide with
    }
    sockaddr_storage address{};
    socklen_t size = 0;
    if (family == AF_INET) {
        auto* a = reinterpret_cast<sockaddr_in*>(&address);
        a->sin_family = AF_INET;
        a->sin_port = htons(port);
        size = sizeof *a;
    } else {
        auto* a = reinterpret_cast<sockaddr_in6*>(&address);
        a->sin6_family = AF_INET6;
        a->sin6_port = htons(port);
        const int only = 1;
        ::setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &only, sizeof only);
        size = sizeof *a;
    }
    const bool free = ::bind(fd, reinterpret_cast<sockaddr*>(&address), size) == 0;
    ::close(fd);
    return free;
}

} // namespace

namespace {

// Test processes run side by side, and a port that is free when one picks
// it may be picked by another before the server binds it (two sessions on
// one port hear each other). Each pair is reserved by a lock file held
// until the process exits.
bool reserve_port_pair(uint16_t port) {
    const std::filesystem::path dir = std::filesystem::temp_directory_path() / "audiod-test-ports";
    std::error_code ignored;
    std::filesystem::create_directories(dir, ignored);
    const std::string path = (dir / std::to_string(port)).string();
    const int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0666);
    if (fd < 0) {
        return false;
    }
    if (::flock(fd, LOCK_EX | LOCK_NB) != 0) {
        ::close(fd);
        return false;
    }
    return true; // the descriptor stays open: the reservation lasts the process
}

} // namespace

uint16_t free_udp_port_pair() {
    // Below the kernel's ephemeral range: a port in it may be given to any
    // process's socket between the check here and the test's bind (a
    // stress run lost a port so to "Address already in use").
    static const auto [low, high] = [] {
        unsigned ephemeral_low = 32768;
        unsigned ephemeral_high = 60999;
        std::ifstream("/proc/sys/net/ipv4/ip_local_port_range") >> ephemeral_low >> ephemeral_high;
        return ephemeral_low >= 12000 ? std::pair<unsigned, unsigned>{10000, ephemeral_low - 2}
                                      : std::pair<unsigned, unsigned>{ephemeral_high + 1, 65532};
    }();
    static unsigned next = low + 2 * (std::random_device{}() % ((high - low) / 2));
    for (int tries = 0; tries < 1000; ++tries, next += 2) {
        if (next > high) {
            next = low;
        }
        const auto p = static_cast<uint16_t>(next);
        if (udp_port_free(AF_INET, p) && udp_port_free(AF_INET, p + 1) &&
            udp_port_free(AF_INET6, p) && udp_port_free(AF_INET6, p + 1) && reserve_port_pair(p)) {
            next += 2;
            return p;
        }
    }
    BOOST_FAIL("no free UDP port pair");
    return 0;
}

bool wait_for_udp_listener(uint16_t port, std::chrono::milliseconds limit) {
    char hex[8];
    std::snprintf(hex, sizeof hex, ":%04X ", port);
    return eventually(
        [&] {
            // /proc/net/udp{,6}: "sl local_address rem_address ...", the local
            // address as HEXADDR:HEXPORT.
            for (const char* table : {"/proc/net/udp", "/proc/net/udp6"}) {
                std::ifstream in(table);
                std::string line;
                while (std::getline(in, line)) {
                    const auto local = line.find(':', line.find(':') + 1);
                    if (local != std::string::npos && line.compare(local, 6, hex) == 0) {
                        return true;
                    }
                }
            }
            return false;
        },
        limit);
}

// The sequence numbers of a "sequence" stream found in a WAV, in file order.
std::vector<uint64_t> sequence_in(const std::string& path) {
    const auto samples = read_wav_s16(path);
    std::vector<uint64_t> out;
    for (size_t f = 0; f < samples.size() / 2; ++f) {
        if (samples[2 * f] != 0 || samples[2 * f + 1] != 0) {
            out.push_back(sequence_number(samples[2 * f], samples[2 * f + 1]));
        }
    }
    return out;
}

// Each file holds an increasing run of the sequence; together, every number
// below `frames` exactly once. Returns how many runs (stays on a sink) there were.
size_t check_split_sequence(const std::vector<std::vector<uint64_t>>& files, uint64_t frames) {
    std::vector<int> seen(frames, 0);
    size_t runs = 0;
    for (const auto& values : files) {
        for (size_t i = 0; i < values.size(); ++i) {
            BOOST_REQUIRE_MESSAGE(values[i] < frames, "stray value " << values[i]);
            ++seen[values[i]];
            if (i > 0) {
                BOOST_REQUIRE_MESSAGE(values[i] > values[i - 1],
                                      "out of order: " << values[i - 1] << " then " << values[i]);
            }
            runs += i == 0 || values[i] != values[i - 1] + 1;
        }
    }
    for (uint64_t n = 0; n < frames; ++n) {
        BOOST_REQUIRE_MESSAGE(seen[n] == 1, "frame " << n << " played " << seen[n] << " times");
    }
    return runs;
}

// The frames a test client wrote (all of them played, since it drained).
uint64_t written_by(const ProgramResult& r) {
    const auto written = json_number(r.out, "written");
    BOOST_REQUIRE_MESSAGE(written, "no report from the client: " << r.out << r.err);
    return *written;
}

bool has_row(const std::string& table, const std::vector<std::string>& fields) {
    const auto is_number = [](const std::string& text) {
        return !text.empty() && text.find_first_not_of("0123456789.") == std::string::npos;
    };
    const auto matches = [&](const std::string& want, const std::string& got) {
        if (want == "#") {
            return is_number(got);
        }
        if (want == "#/#") {
            const size_t slash = got.find('/');
            return slash != std::string::npos && is_number(got.substr(0, slash)) &&
                   is_number(got.substr(slash + 1));
        }
        return want == got;
    };
    std::istringstream lines(table);
    for (std::string line; std::getline(lines, line);) {
        std::istringstream words(line);
        std::vector<std::string> got;
        for (std::string word; words >> word;) {
            got.push_back(word);
        }
        if (got.size() >= fields.size() &&
            std::equal(fields.begin(), fields.end(), got.begin(), matches)) {
            return true;
        }
    }
    return false;
}

} // namespace audiod::test
