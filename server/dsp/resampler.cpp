#include "dsp/resampler.h"

#include <speex/speex_resampler.h>

namespace audiod {

std::variant<std::unique_ptr<Resampler>, std::string>
Resampler::create(uint32_t channels, uint32_t in_rate, uint32_t out_rate, int quality) {
    int error = 0;
    SpeexResamplerState* state = speex_resampler_init(channels, in_rate, out_rate, quality, &error);
    if (state == nullptr) {
        return std::string("cannot create a resampler: ") + speex_resampler_strerror(error);
    }
    // Output starts with the first input sample, not the filter's zeros.
    speex_resampler_skip_zeros(state);
    std::unique_ptr<Resampler> resampler(new Resampler);
    resampler->state_ = state;
    resampler->channels_ = channels;
    resampler->in_rate_ = in_rate;
    resampler->out_rate_ = out_rate;
    return resampler;
}

Resampler::~Resampler() {
    if (state_ != nullptr) {
        speex_resampler_destroy(state_);
    }
}

void Resampler::process(const float* in, uint32_t* in_frames, float* out,
                        uint32_t* out_frames) noexcept {
    spx_uint32_t in_len = *in_frames;
    spx_uint32_t out_len = *out_frames;
    speex_resampler_process_interleaved_float(state_, in, &in_len, out, &out_len);
    *in_frames = in_len;
    *out_frames = out_len;
}

uint32_t Resampler::input_for(uint32_t out_frames) const noexcept {
    return static_cast<uint32_t>((uint64_t{out_frames} * in_rate_ + out_rate_ - 1) / out_rate_);
}

uint32_t Resampler::latency_frames() const noexcept {
    return static_cast<uint32_t>(speex_resampler_get_output_latency(state_));
}

void Resampler::reset() noexcept {
    speex_resampler_reset_mem(state_);
}

} // namespace audiod
