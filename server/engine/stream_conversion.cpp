#include "engine/stream_conversion.h"

namespace audiod {

Status prepare_conversion(Stream& stream, const DeviceFormat& sf, uint32_t sink_latency_frames,
                          int quality) {
    Stream::Conversion& conversion = stream.conversion;
    // Playback resamples after mixing to the sink's channels, record after
    // mixing to the stream's.
    const uint32_t in_rate = stream.record ? sf.rate : stream.rate;
    const uint32_t out_rate = stream.record ? stream.rate : sf.rate;
    const uint32_t resampled_channels = stream.record ? stream.channels : sf.channels;
    conversion.direct = stream.channels == sf.channels && stream.rate == sf.rate &&
                        (stream.record || stream.format == SampleFormat::s16le ||
                         stream.format == SampleFormat::f32le);
    conversion.mix = stream.record ? make_channel_mix(sf.channels, stream.channels)
                                   : make_channel_mix(stream.channels, sf.channels);
    const bool keep = conversion.resampler != nullptr &&
                      conversion.resampler->in_rate() == in_rate &&
                      conversion.resampler->out_rate() == out_rate &&
                      conversion.resampler->channels() == resampled_channels;
    if (in_rate == out_rate) {
        conversion.resampler.reset();
    } else if (!keep) {
        conversion.resampler.reset();
        auto created = Resampler::create(resampled_channels, in_rate, out_rate, quality);
        if (auto* error = std::get_if<std::string>(&created)) {
            return Status::failure(*error);
        }
        conversion.resampler = std::move(std::get<std::unique_ptr<Resampler>>(created));
    }
    // The client counts its delay in its own frames (a record stream's
    // audio is already through the sink when it is taken).
    uint64_t latency = stream.record ? 0 : sink_latency_frames;
    if (conversion.resampler != nullptr) {
        latency += conversion.resampler->latency_frames();
    }
    stream.ring.header()->sink_latency_frames.store(
        static_cast<uint32_t>(stream.record ? latency : latency * stream.rate / sf.rate));
    return Status::success();
}

} // namespace audiod
