#include "rtp_option_reader.h"

namespace audiod::rtp {

bool OptionReader::keys_known(OptionSpecs specs) {
    if (auto refusal = options_.check_keys(specs, "the " + std::string(device_))) {
        error_ = std::move(*refusal);
        return false;
    }
    return true;
}

bool OptionReader::boolean(const char* key, bool& value) {
    if (const auto text = options_.get(key); text && !parse_bool(*text, value)) {
        refuse(key, "'" + *text + "' is not true or false");
        return false;
    }
    return true;
}

bool OptionReader::payload(Encoding& value) {
    if (const auto text = options_.get("payload")) {
        const auto encoding = parse_encoding(*text);
        if (!encoding) {
            refuse("payload", "'" + *text + "' is not opus, l16 or l24");
            return false;
        }
        value = *encoding;
    }
    return true;
}

std::nullopt_t OptionReader::refuse(std::string_view key, const std::string& why) {
    error_ = std::string(device_) + " option " + std::string(key) + ": " + why;
    return std::nullopt;
}

} // namespace audiod::rtp
