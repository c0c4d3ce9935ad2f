// The portaudio module, loaded as the server loads it (dlopen), with
// PortAudio's ALSA host API pointed at the test sound card in a directory
// of its own. For tests that drive a sink's or source's cycles by hand.
#pragma once

#include "audiod/module.h"
#include "unit/modules/portaudio/test_card_dir.h"

#include <boost/test/unit_test.hpp>

#include <dlfcn.h>
#include <filesystem>
#include <string>

namespace audiod::test {

inline void log_module_line(int, const char* component, const char* message) {
    BOOST_TEST_MESSAGE(component << ": " << message);
}

struct ModuleOnTestCard {
    ModuleOnTestCard() {
        card = use_test_card("module");
        handle = ::dlopen(AUDIOD_MODULE_BUILD_DIR "/portaudio.so", RTLD_NOW);
        BOOST_REQUIRE_MESSAGE(handle != nullptr, ::dlerror());
        auto entry =
            reinterpret_cast<audiod_module_entry_fn>(::dlsym(handle, "audiod_module_entry"));
        BOOST_REQUIRE(entry != nullptr);
        module = entry();
    }
    ~ModuleOnTestCard() { std::filesystem::remove_all(card); }
    ModuleOnTestCard(const ModuleOnTestCard&) = delete;
    ModuleOnTestCard& operator=(const ModuleOnTestCard&) = delete;

    std::filesystem::path card;
    void* handle = nullptr;
    const audiod_module* module = nullptr;
    audiod_host host{AUDIOD_MODULE_ABI_VERSION, log_module_line, nullptr, nullptr};
};

} // namespace audiod::test
