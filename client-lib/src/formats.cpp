// The sample formats of the C API, by name and size (protocol/sample_format.h).
#include "audiod/audiod.h"
#include "protocol/sample_format.h"

extern "C" {

const char* audiod_format_name(int format) {
    return audiod::format_name(static_cast<audiod::SampleFormat>(format)).data();
}

int audiod_format_from_name(const char* name) {
    if (name == nullptr) {
        return AUDIOD_FORMAT_INVALID;
    }
    const auto format = audiod::parse_format(name);
    return format ? static_cast<int>(*format) : AUDIOD_FORMAT_INVALID;
}

unsigned audiod_format_sample_bytes(int format) {
    return audiod::sample_bytes(static_cast<audiod::SampleFormat>(format));
}

} // extern "C"
