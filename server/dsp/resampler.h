// Sample-rate conversion for one stream, on the RT thread: speexdsp's
// resampler (Debian's libspeexdsp), chosen over libsoxr by measurement
// (bench/resample; bench/results/2026-11-30-resampler.md): both are far below -90 dB THD+N,
// but soxr reallocates its input FIFO while processing and adds 20-176 ms
// of latency, while speexdsp processes in fixed state, never allocating
// after init, with under 1 ms of latency at common rates.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <variant>

struct SpeexResamplerState_;

namespace audiod {

class Resampler {
public:
    // 0 (fastest) .. 10 (best); 5 measures -112 dB THD+N at 44.1 -> 48 kHz.
    static constexpr int kDefaultQuality = 5;

    // Thread: control (allocates).
    static std::variant<std::unique_ptr<Resampler>, std::string>
    create(uint32_t channels, uint32_t in_rate, uint32_t out_rate, int quality);
    ~Resampler();
    Resampler(const Resampler&) = delete;
    Resampler& operator=(const Resampler&) = delete;

    // Converts up to *in_frames interleaved frames into up to *out_frames;
    // sets both to what was consumed and produced. Thread: rt (never
    // allocates or locks).
    void process(const float* in, uint32_t* in_frames, float* out, uint32_t* out_frames) noexcept;

    // Forgets the audio it has seen (the filter's history). Thread: rt.
    void reset() noexcept;

    // Input frames that produce about `out_frames` output frames (rounded up).
    [[nodiscard]] uint32_t input_for(uint32_t out_frames) const noexcept;
    // Latency the filter adds, in output frames.
    [[nodiscard]] uint32_t latency_frames() const noexcept;

    [[nodiscard]] uint32_t in_rate() const noexcept { return in_rate_; }
    [[nodiscard]] uint32_t out_rate() const noexcept { return out_rate_; }
    [[nodiscard]] uint32_t channels() const noexcept { return channels_; }

private:
    Resampler() = default;
    SpeexResamplerState_* state_ = nullptr;
    uint32_t channels_ = 0;
    uint32_t in_rate_ = 0;
    uint32_t out_rate_ = 0;
};

} // namespace audiod
