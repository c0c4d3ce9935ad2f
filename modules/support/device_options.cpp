#include "device_options.h"

#include <algorithm>

namespace audiod {

std::string option_keys(OptionSpecs specs) {
    std::string keys;
    for (const audiod_option_spec& spec : specs) {
        keys += (keys.empty() ? "" : ", ") + std::string(spec.key);
    }
    return keys.empty() ? "none" : keys;
}

std::optional<std::string> DeviceOptions::check_keys(OptionSpecs specs,
                                                     std::string_view device) const {
    for (size_t i = 0; i < config_.option_count; ++i) {
        const std::string_view key = config_.options[i].key;
        const bool known =
            std::any_of(specs.begin(), specs.end(),
                        [&](const audiod_option_spec& spec) { return key == spec.key; });
        if (!known) {
            return std::string(device) + " has no option '" + std::string(key) +
                   "' (known: " + option_keys(specs) + ")";
        }
    }
    return std::nullopt;
}

} // namespace audiod
