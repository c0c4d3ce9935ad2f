#include "pulse/server_facts.h"

#include "protocol/version.h"

#include <pwd.h>
#include <unistd.h>

namespace audiod::pulse {

namespace {

// PulseAudio's channel positions.
enum : uint8_t {
    kMono = 0,
    kFrontLeft = 1,
    kFrontRight = 2,
    kFrontCenter = 3,
    kRearCenter = 4,
    kRearLeft = 5,
    kRearRight = 6,
    kLfe = 7,
    kSideLeft = 10,
    kSideRight = 11,
};

std::string user_name() {
    if (const passwd* entry = ::getpwuid(::geteuid()); entry != nullptr && entry->pw_name) {
        return entry->pw_name;
    }
    return std::to_string(::geteuid());
}

std::string host_name() {
    char name[256] = {};
    return ::gethostname(name, sizeof name - 1) == 0 ? std::string(name) : std::string("localhost");
}

} // namespace

std::string server_name() {
    return std::string("PulseAudio (on audiod ") + AUDIOD_VERSION_STRING + ")";
}

ChannelMap standard_channel_map(uint32_t channels) {
    switch (channels) {
    case 1:
        return {{kMono}};
    case 2:
        return {{kFrontLeft, kFrontRight}};
    case 3:
        return {{kFrontLeft, kFrontRight, kFrontCenter}};
    case 4:
        return {{kFrontLeft, kFrontRight, kRearLeft, kRearRight}};
    case 5:
        return {{kFrontLeft, kFrontRight, kFrontCenter, kRearLeft, kRearRight}};
    case 6:
        return {{kFrontLeft, kFrontRight, kFrontCenter, kLfe, kRearLeft, kRearRight}};
    case 7:
        return {{kFrontLeft, kFrontRight, kFrontCenter, kLfe, kRearCenter, kSideLeft, kSideRight}};
    default:
        return {{kFrontLeft, kFrontRight, kFrontCenter, kLfe, kRearLeft, kRearRight, kSideLeft,
                 kSideRight}};
    }
}

TagWriter server_info(const EngineFacts& facts, uint32_t version, uint32_t cookie) {
    TagWriter w;
    w.put_string(server_name());
    w.put_string(kServerVersion);
    w.put_string(user_name());
    w.put_string(host_name());
    w.put_sample_spec({static_cast<uint8_t>(SampleFormat::s16le),
                       static_cast<uint8_t>(facts.channels), facts.rate});
    w.put_optional_string(facts.default_sink.empty() ? std::nullopt
                                                     : std::optional(facts.default_sink));
    w.put_optional_string(facts.default_source.empty() ? std::nullopt
                                                       : std::optional(facts.default_source));
    w.put_u32(cookie);
    if (version >= 15) {
        w.put_channel_map(standard_channel_map(facts.channels));
    }
    return w;
}

} // namespace audiod::pulse
