// audiod-resample-compare: the measurement behind the choice of resampler.
// Resamples a 1 kHz stereo sine from 44.1 kHz to 48 kHz (and 48 -> 44.1,
// 8 -> 48, 192 -> 48), one 256-frame quantum of output at a time as the RT
// thread does, with libsoxr and speexdsp at several qualities, and prints
// for each: THD+N of the output (a least-squares fit of the known tone;
// everything else is distortion and noise), CPU per stream (% of one core
// for real-time stereo), the latency it adds, and how many times it called
// malloc/realloc/calloc while processing (after a one-second warm-up) —
// which the RT thread must never do.
#include "support/tone_analysis.h"

#include <soxr.h>
#include <speex/speex_resampler.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <functional>
#include <string>
#include <vector>

extern "C" void* __libc_malloc(size_t);
extern "C" void* __libc_realloc(void*, size_t);
extern "C" void* __libc_calloc(size_t, size_t);

namespace {
bool counting = false;
long allocations = 0;
} // namespace

// glibc's own entry points, counted while `counting` is set.
extern "C" void* malloc(size_t n) {
    allocations += counting ? 1 : 0;
    return __libc_malloc(n);
}
extern "C" void* realloc(void* p, size_t n) {
    allocations += counting ? 1 : 0;
    return __libc_realloc(p, n);
}
extern "C" void* calloc(size_t n, size_t size) {
    allocations += counting ? 1 : 0;
    return __libc_calloc(n, size);
}

namespace {

constexpr unsigned kChannels = 2;
constexpr unsigned kQuantum = 256;
constexpr double kTone = 1000.0;
constexpr double kSeconds = 20.0;

// Produces `out_frames` frames into `out` from `in` (interleaved), returning
// how many input frames it consumed.
using Process = std::function<size_t(const float* in, size_t in_frames, float* out,
                                     size_t out_frames, size_t* produced)>;

struct Result {
    double thd_n_db = 0;
    double cpu_percent = 0;
    double latency_ms = 0;
    long allocations = 0;
};

Result run(double in_rate, double out_rate, const Process& process) {
    const size_t in_frames = static_cast<size_t>(in_rate * kSeconds);
    std::vector<float> in(in_frames * kChannels);
    for (size_t i = 0; i < in_frames; ++i) {
        const float s = static_cast<float>(0.5 * std::sin(2 * M_PI * kTone * double(i) / in_rate));
        in[i * kChannels] = s;
        in[i * kChannels + 1] = s;
    }
    std::vector<float> left;
    // Reserved, so that only the resampler's own allocations are counted.
    left.reserve(static_cast<size_t>(out_rate * (kSeconds + 1)));
    std::vector<float> out(kQuantum * kChannels);
    size_t at = 0;
    const auto start = std::chrono::steady_clock::now();
    allocations = 0;
    while (at + 4096 < in_frames) {
        counting = at > static_cast<size_t>(in_rate);
        size_t produced = 0;
        const size_t want = std::min<size_t>(in_frames - at, 4096);
        at += process(in.data() + at * kChannels, want, out.data(), kQuantum, &produced);
        for (size_t f = 0; f < produced; ++f) {
            left.push_back(out[f * kChannels]);
        }
    }
    counting = false;
    const double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    Result r;
    r.allocations = allocations;
    r.cpu_percent = 100.0 * seconds / (double(left.size()) / out_rate);
    // Past any start-up transient and the end.
    const auto skip = static_cast<size_t>(out_rate / 2);
    r.thd_n_db =
        audiod::measure_tone(left.data() + skip, left.size() - 2 * skip, 1, kTone, out_rate)
            .thd_n_db;
    return r;
}

Result with_speex(int quality, unsigned in_rate, unsigned out_rate) {
    int err = 0;
    SpeexResamplerState* st = speex_resampler_init(kChannels, in_rate, out_rate, quality, &err);
    speex_resampler_skip_zeros(st);
    Result r = run(in_rate, out_rate,
                   [&](const float* in, size_t n, float* out, size_t want, size_t* produced) {
                       spx_uint32_t in_len = static_cast<spx_uint32_t>(n);
                       spx_uint32_t out_len = static_cast<spx_uint32_t>(want);
                       speex_resampler_process_interleaved_float(st, in, &in_len, out, &out_len);
                       *produced = out_len;
                       return size_t{in_len};
                   });
    r.latency_ms = 1000.0 * speex_resampler_get_output_latency(st) / out_rate;
    speex_resampler_destroy(st);
    return r;
}

Result with_soxr(unsigned long recipe, unsigned in_rate, unsigned out_rate) {
    soxr_error_t error = nullptr;
    const soxr_io_spec_t io = soxr_io_spec(SOXR_FLOAT32_I, SOXR_FLOAT32_I);
    const soxr_quality_spec_t q = soxr_quality_spec(recipe, 0);
    const soxr_runtime_spec_t rt = soxr_runtime_spec(1);
    soxr_t s = soxr_create(in_rate, out_rate, kChannels, &error, &io, &q, &rt);
    double owed = 0;
    Result r = run(in_rate, out_rate,
                   [&](const float* in, size_t n, float* out, size_t want, size_t* produced) {
                       size_t used = 0;
                       size_t done = 0;
                       // Feed exactly what `want` frames need, as the RT
                       // path would: soxr buffers whatever it is given.
                       owed += double(want) * in_rate / out_rate;
                       const auto feed = std::min<size_t>(n, static_cast<size_t>(owed));
                       owed -= double(feed);
                       soxr_process(s, in, feed, &used, out, want, &done);
                       *produced = done;
                       return used;
                   });
    r.latency_ms = 1000.0 * soxr_delay(s) / out_rate;
    soxr_delete(s);
    return r;
}

} // namespace

int main() {
    struct Pair {
        unsigned in;
        unsigned out;
    };
    const Pair pairs[] = {{44100, 48000}, {48000, 44100}, {8000, 48000}, {192000, 48000}};
    std::printf("%-14s %-16s %10s %12s %10s %7s\n", "conversion", "resampler", "THD+N",
                "CPU/stream", "latency", "mallocs");
    for (const Pair& p : pairs) {
        const std::string name = std::to_string(p.in) + "->" + std::to_string(p.out);
        for (int q : {3, 5, 8, 10}) {
            const Result r = with_speex(q, p.in, p.out);
            std::printf("%-14s speexdsp q%-7d %7.1f dB %10.2f %% %7.2f ms %7ld\n", name.c_str(), q,
                        r.thd_n_db, r.cpu_percent, r.latency_ms, r.allocations);
        }
        const std::pair<const char*, unsigned long> recipes[] = {
            {"QQ", SOXR_QQ}, {"LQ", SOXR_LQ}, {"MQ", SOXR_MQ}, {"HQ", SOXR_HQ}, {"VHQ", SOXR_VHQ}};
        for (const auto& [label, recipe] : recipes) {
            const Result r = with_soxr(recipe, p.in, p.out);
            std::printf("%-14s soxr %-11s %7.1f dB %10.2f %% %7.2f ms %7ld\n", name.c_str(), label,
                        r.thd_n_db, r.cpu_percent, r.latency_ms, r.allocations);
        }
    }
    return 0;
}
