// The modules built here, loaded as the server loads them (dlopen, then
// their entry), for tests that read what they publish: their option
// tables (test_option_tables.cpp), and the manual's test that every option
// is documented as the tables say.
#pragma once

#include "audiod/module.h"

#include <span>
#include <string>

namespace audiod::test {

// Every module the tree builds (not the test fixtures).
inline constexpr const char* kModuleTypes[] = {"null", "file", "alsa", "rtp", "portaudio", "jack"};

// The descriptor of TYPE.so in the build's module directory; loaded once,
// for the rest of the process. Fails the test if it cannot be loaded.
const audiod_module& load_module(const std::string& type);

// A direction's option table (empty if the module has no such direction).
std::span<const audiod_option_spec> sink_option_specs(const audiod_module& module);
std::span<const audiod_option_spec> source_option_specs(const audiod_module& module);

} // namespace audiod::test
