#include "engine/engine_options.h"

#include "config/config_keys.h"

#include "device_options.h"

#include <algorithm>
#include <cstdlib>

namespace audiod {

std::variant<uint32_t, std::string> take_uint_option(OptionList& options, const std::string& key,
                                                     uint32_t fallback, uint32_t min,
                                                     uint32_t max) {
    uint32_t result = fallback;
    for (auto it = options.begin(); it != options.end();) {
        if (it->first != key) {
            ++it;
            continue;
        }
        char* end = nullptr;
        const unsigned long value = std::strtoul(it->second.c_str(), &end, 10);
        if (it->second.empty() || *end != '\0' || value < min || value > max) {
            return key + " = " + it->second + " is out of range (" + std::to_string(min) + ".." +
                   std::to_string(max) + ")";
        }
        result = static_cast<uint32_t>(value);
        it = options.erase(it);
    }
    return result;
}

std::variant<RelayRequest, std::string> take_relay_request(OptionList& options) {
    RelayRequest request;
    for (auto it = options.begin(); it != options.end();) {
        if (it->first == "sink") {
            if (it->second.empty()) {
                return std::string("sink = \"\": name the sink to play the source into");
            }
            request.sink = it->second;
            it = options.erase(it);
        } else {
            ++it;
        }
    }
    const ConfigKey& spec = config_key("sources.NAME", "play-latency-ms");
    const auto latency =
        take_uint_option(options, "play-latency-ms", RelayRequest::kDefaultLatencyMs,
                         static_cast<uint32_t>(spec.min), static_cast<uint32_t>(spec.max));
    if (const auto* error = std::get_if<std::string>(&latency)) {
        return *error;
    }
    request.latency_ms = std::get<uint32_t>(latency);
    return request;
}

bool finds_sources(const OptionList& options) {
    return std::any_of(options.begin(), options.end(), [](const auto& option) {
        bool discover = false;
        return option.first == "discover" && parse_bool(option.second, discover) && discover;
    });
}

bool is_valid_device_name(const std::string& name) {
    if (name.empty() || name.size() > 64) {
        return false;
    }
    return std::all_of(name.begin(), name.end(), [](char c) {
        return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
               c == '-' || c == '_' || c == '.';
    });
}

} // namespace audiod
