#include "pulse/sample_cache.h"

#include "pulse/sample_spec.h"

#include <algorithm>

namespace audiod::pulse {

void Upload::append(std::span<const uint8_t> bytes) {
    const size_t room = length - std::min<size_t>(length, audio.size());
    const size_t taken = std::min(room, bytes.size());
    audio.insert(audio.end(), bytes.begin(), bytes.begin() + static_cast<ptrdiff_t>(taken));
}

std::string SampleCache::may_upload(uint32_t client, uint64_t pending, uint32_t length) const {
    if (length == 0 || length > kMaxSampleBytes) {
        return "a sample of " + std::to_string(length) + " bytes (1 to " +
               std::to_string(kMaxSampleBytes) + ")";
    }
    if (bytes_of(client) + pending + length > kMaxClientBytes) {
        return "the client would hold more than " + std::to_string(kMaxClientBytes >> 20) +
               " MiB of samples";
    }
    if (bytes_ + length > kMaxCacheBytes || samples_.size() >= kMaxSamples) {
        return "the sample cache is full";
    }
    return "";
}

std::optional<uint32_t> SampleCache::add(Upload upload, uint32_t owner, uint32_t shelf) {
    const auto replaced = samples_.find(Key{shelf, upload.name});
    const uint64_t freed = replaced != samples_.end() ? replaced->second.audio->size() : 0;
    const bool grows = replaced == samples_.end();
    if (bytes_ - freed + upload.audio.size() > kMaxCacheBytes ||
        (grows && samples_.size() >= kMaxSamples)) {
        return std::nullopt;
    }
    Sample sample;
    // A sample replaced keeps its index, as a sink reloaded keeps its own.
    sample.index = grows ? next_index_++ : replaced->second.index;
    sample.name = upload.name;
    sample.spec = upload.spec;
    sample.map = std::move(upload.map);
    sample.properties = std::move(upload.properties);
    sample.owner = owner;
    sample.shelf = shelf;
    bytes_ = bytes_ - freed + upload.audio.size();
    sample.audio = std::make_shared<const std::vector<uint8_t>>(std::move(upload.audio));
    const uint32_t index = sample.index;
    samples_[Key{shelf, sample.name}] = std::move(sample);
    return index;
}

std::optional<uint32_t> SampleCache::remove(uint32_t shelf, const std::string& name) {
    const auto it = samples_.find(Key{shelf, name});
    if (it == samples_.end()) {
        return std::nullopt;
    }
    const uint32_t index = it->second.index;
    bytes_ -= it->second.audio->size();
    samples_.erase(it);
    return index;
}

const Sample* SampleCache::find(uint32_t shelf, const std::string& name) const {
    const auto it = samples_.find(Key{shelf, name});
    return it == samples_.end() ? nullptr : &it->second;
}

const Sample* SampleCache::find(uint32_t shelf, uint32_t index) const {
    for (const auto& [key, sample] : samples_) {
        if (sample.index == index && sample.shelf == shelf) {
            return &sample;
        }
    }
    return nullptr;
}

std::vector<const Sample*> SampleCache::on_shelf(uint32_t shelf) const {
    std::vector<const Sample*> found;
    for (auto it = samples_.lower_bound(Key{shelf, ""});
         it != samples_.end() && it->first.first == shelf; ++it) {
        found.push_back(&it->second);
    }
    return found;
}

uint64_t SampleCache::bytes_of(uint32_t client) const {
    uint64_t bytes = 0;
    for (const auto& [key, sample] : samples_) {
        if (sample.owner == client) {
            bytes += sample.audio->size();
        }
    }
    return bytes;
}

void put_sample_info(TagWriter& w, const Sample& sample, uint32_t version) {
    const uint32_t frame = frame_bytes(sample.spec);
    const uint64_t frames = frame == 0 ? 0 : sample.audio->size() / frame;
    w.put_u32(sample.index);
    w.put_string(sample.name);
    w.put_channel_volumes({std::vector<uint32_t>(sample.spec.channels, kNormVolume)});
    w.put_usec(sample.spec.rate == 0 ? 0 : frames * 1000000 / sample.spec.rate);
    w.put_sample_spec(sample.spec);
    w.put_channel_map(sample.map);
    w.put_u32(static_cast<uint32_t>(sample.audio->size()));
    w.put_bool(false); // lazy: loaded from a file on first use, which audiod never does
    w.put_null_string();
    if (version >= 13) {
        w.put_proplist(sample.properties);
    }
}

} // namespace audiod::pulse
