#include "device_match.h"

#include <algorithm>

namespace audiod::portaudio {

namespace {

std::string describe(const Candidate& c) {
    return std::to_string(c.index) + " \"" + c.name + "\" (" + c.api + ")";
}

std::string listed(const std::vector<const Candidate*>& devices) {
    if (devices.empty()) {
        return "none";
    }
    std::string text;
    for (const Candidate* c : devices) {
        text += (text.empty() ? "" : ", ") + describe(*c);
    }
    return text;
}

bool is_index(const std::string& text) {
    return !text.empty() && text.size() <= 6 &&
           std::all_of(text.begin(), text.end(), [](char c) { return c >= '0' && c <= '9'; });
}

} // namespace

std::variant<int, std::string> match_device(const std::vector<Candidate>& devices,
                                            const DeviceRequest& request) {
    const char* way = request.capture ? "record" : "play";
    std::vector<const Candidate*> usable;
    bool api_known = !request.api.has_value();
    for (const Candidate& c : devices) {
        api_known = api_known || c.api == *request.api;
        if (c.channels > 0 && (!request.api || c.api == *request.api)) {
            usable.push_back(&c);
        }
    }
    if (!api_known) {
        std::vector<std::string> apis;
        for (const Candidate& c : devices) {
            if (std::find(apis.begin(), apis.end(), c.api) == apis.end()) {
                apis.push_back(c.api);
            }
        }
        std::string names;
        for (const std::string& api : apis) {
            names += (names.empty() ? "" : ", ") + api;
        }
        return "PortAudio has no host API '" + *request.api +
               "' here (it has: " + (names.empty() ? "none" : names) + ")";
    }
    const std::string where = request.api ? " through " + *request.api : "";
    if (!request.device) {
        for (const Candidate* c : usable) {
            if (c->index == request.default_index) {
                return c->index;
            }
        }
        return std::string("PortAudio has no default device to ") + way + where +
               "; name one with device = (devices that can: " + listed(usable) + ")";
    }
    const std::string& wanted = *request.device;
    if (is_index(wanted)) {
        const int index = std::stoi(wanted);
        for (const Candidate* c : usable) {
            if (c->index == index) {
                return index;
            }
        }
        return "PortAudio device " + wanted + " cannot " + way + where +
               " (devices that can: " + listed(usable) + ")";
    }
    std::vector<const Candidate*> exact;
    std::vector<const Candidate*> partial;
    for (const Candidate* c : usable) {
        if (c->name == wanted) {
            exact.push_back(c);
        } else if (c->name.find(wanted) != std::string::npos) {
            partial.push_back(c);
        }
    }
    const std::vector<const Candidate*>& found = exact.empty() ? partial : exact;
    if (found.size() == 1) {
        return found.front()->index;
    }
    if (found.empty()) {
        return "no PortAudio device that can " + std::string(way) + where + " is named '" + wanted +
               "' (devices that can: " + listed(usable) + ")";
    }
    return "'" + wanted + "' names " + std::to_string(found.size()) + " PortAudio devices (" +
           listed(found) + "): give the whole name, an index, or host-api";
}

} // namespace audiod::portaudio
