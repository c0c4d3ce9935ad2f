// The test sound card (tests/fixtures/fake_card) for PortAudio's ALSA host
// API, in a directory of its own: where its fault files go.
#pragma once

#include <cstdlib>
#include <filesystem>
#include <string>
#include <unistd.h>

namespace audiod::test {

// Makes the directory (named after `name` and this process) and points
// alsa-lib's configuration and the card at it; PortAudio, started after
// this, lists the card as "testcard".
inline std::filesystem::path use_test_card(const std::string& name) {
    const auto dir = std::filesystem::temp_directory_path() /
                     ("audiod-pa-" + name + "-" + std::to_string(::getpid()));
    std::filesystem::create_directories(dir);
    ::setenv("ALSA_CONFIG_PATH", AUDIOD_BUILD_DIR "/tests/alsa/asound.conf", 1);
    ::setenv("AUDIOD_TESTCARD_DIR", dir.c_str(), 1);
    return dir;
}

} // namespace audiod::test
