#include "stream_conversion.h"

namespace audiod {

std::string prepare_conversion(Stream& stream, const SinkFormat& sf, uint32_t sink_latency_frames,
                               int quality) {
    Stream::Conversion& conversion = stream.conversion;
    conversion.direct =
        (stream.format == SampleFormat::s16le || stream.format == SampleFormat::f32le) &&
        stream.channels == sf.channels && stream.rate == sf.rate;
    conversion.mix = make_channel_mix(stream.channels, sf.channels);
    const bool keep = conversion.resampler != nullptr &&
                      conversion.resampler->in_rate() == stream.rate &&
                      conversion.resampler->out_rate() == sf.rate &&
                      conversion.resampler->channels() == sf.channels;
    if (stream.rate == sf.rate) {
        conversion.resampler.reset();
    } else if (!keep) {
        conversion.resampler.reset();
        auto created = Resampler::create(sf.channels, stream.rate, sf.rate, quality);
        if (auto* error = std::get_if<std::string>(&created)) {
            return *error;
        }
        conversion.resampler = std::move(std::get<std::unique_ptr<Resampler>>(created));
    }
    // The client counts its delay in its own frames.
    uint64_t latency = sink_latency_frames;
    if (conversion.resampler != nullptr) {
        latency += conversion.resampler->latency_frames();
    }
    stream.ring.header()->sink_latency_frames.store(
        static_cast<uint32_t>(latency * stream.rate / sf.rate));
    return "";
}

} // namespace audiod
