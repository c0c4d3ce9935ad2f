// PulseAudio's sample cache: short sounds a client uploads once, by name,
// and has played later, on any sink, by any client (libcanberra's event
// sounds: a click, a bell). A sample is kept as uploaded (its format, its
// bytes) until removed or the server stops; it plays as a stream of its
// own, which the pulse server feeds from the cache.
//
// On a server shared by several users (audiod --system) each user has a
// shelf of their own: a name means that user's sample, and nobody sees,
// plays, replaces or removes another user's (one user's "bell" is never
// what another's desktop rings). A user's own server has one shelf, 0.
//
// Limits, since any client may upload: kMaxSampleBytes a sample,
// kMaxClientBytes for what one client has uploaded and still holds (in the
// cache or on its way), kMaxCacheBytes and kMaxSamples in all.
// Thread: any (pure).
#pragma once

#include "pulse/tagstruct.h"

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

namespace audiod::pulse {

struct Sample {
    uint32_t index = 0;
    std::string name;
    SampleSpec spec;
    ChannelMap map;
    std::shared_ptr<const std::vector<uint8_t>> audio; // shared with what plays it
    PropertyList properties;
    uint32_t owner = 0; // the connection that uploaded it
    uint32_t shelf = 0; // whose it is: a uid on a shared server, else 0
};

// A sample on its way: CREATE_UPLOAD_STREAM, its audio, FINISH.
struct Upload {
    std::string name;
    SampleSpec spec;
    ChannelMap map;
    uint32_t length = 0; // bytes announced
    std::vector<uint8_t> audio;
    PropertyList properties;

    // Takes audio; what goes past the announced length is dropped.
    void append(std::span<const uint8_t> bytes);
};

class SampleCache {
public:
    static constexpr uint32_t kMaxSampleBytes = 16u << 20;
    static constexpr uint64_t kMaxClientBytes = 32u << 20;
    static constexpr uint64_t kMaxCacheBytes = 128u << 20;
    static constexpr size_t kMaxSamples = 1024;

    // Whether `client`, holding `pending` bytes in uploads, may start one
    // of `length` bytes: "" or why not.
    [[nodiscard]] std::string may_upload(uint32_t client, uint64_t pending, uint32_t length) const;
    // Keeps an upload on a shelf (replacing a sample of its name there);
    // its index, or nullopt if the cache is full.
    std::optional<uint32_t> add(Upload upload, uint32_t owner, uint32_t shelf);
    // The index a sample of this name on the shelf had, if one was removed.
    std::optional<uint32_t> remove(uint32_t shelf, const std::string& name);

    [[nodiscard]] const Sample* find(uint32_t shelf, const std::string& name) const;
    // By index, on the shelf only.
    [[nodiscard]] const Sample* find(uint32_t shelf, uint32_t index) const;
    // The shelf's samples, by name.
    [[nodiscard]] std::vector<const Sample*> on_shelf(uint32_t shelf) const;
    [[nodiscard]] uint64_t bytes_of(uint32_t client) const;

private:
    using Key = std::pair<uint32_t, std::string>; // shelf, name
    std::map<Key, Sample> samples_;
    uint64_t bytes_ = 0;
    uint32_t next_index_ = 0;
};

// One GET_SAMPLE_INFO entry, by the client's protocol version.
void put_sample_info(TagWriter& w, const Sample& sample, uint32_t version);

} // namespace audiod::pulse
