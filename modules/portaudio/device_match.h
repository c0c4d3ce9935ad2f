// Which PortAudio device a `device` option names, among those PortAudio
// lists. Kept apart from PortAudio itself so that the rules are unit
// tested without it. Thread: control.
//
// A name is matched exactly first, then as a part of one device's name; a
// number is an index. `host-api` narrows the candidates to one host API,
// and only devices that go the wanted way (play or record) count. No name
// means the default device (of the host API, when one is given). A name
// that matches nothing, or several devices, is refused with a message that
// lists the candidates, so that the user can pick one.
#pragma once

#include <optional>
#include <string>
#include <variant>
#include <vector>

namespace audiod::portaudio {

struct Candidate {
    int index = -1;
    std::string name;
    std::string api;  // "alsa", "jack", "oss" ...
    int channels = 0; // in the wanted direction; 0: it does not go that way
};

struct DeviceRequest {
    std::optional<std::string> device; // the option as written
    std::optional<std::string> api;
    int default_index = -1; // PortAudio's default for the direction (and api), or -1
    bool capture = false;
};

// The chosen device's index, or why none.
std::variant<int, std::string> match_device(const std::vector<Candidate>& devices,
                                            const DeviceRequest& request);

} // namespace audiod::portaudio
