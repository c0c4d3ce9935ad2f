#include "unit/modules/module_tables.h"

#include <boost/test/unit_test.hpp>

#include <dlfcn.h>

namespace audiod::test {

namespace {

std::span<const audiod_option_spec> specs(const audiod_option_spec* table, size_t count) {
    return table != nullptr ? std::span(table, count) : std::span<const audiod_option_spec>();
}

} // namespace

const audiod_module& load_module(const std::string& type) {
    const std::string path = AUDIOD_MODULE_BUILD_DIR "/" + type + ".so";
    // Never closed, as the server's loader does: a module's libraries may
    // leave threads or handlers behind.
    void* handle = ::dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL | RTLD_NODELETE);
    BOOST_REQUIRE_MESSAGE(handle != nullptr, path << ": " << ::dlerror());
    auto entry =
        reinterpret_cast<audiod_module_entry_fn>(::dlsym(handle, AUDIOD_MODULE_ENTRY_SYMBOL));
    BOOST_REQUIRE_MESSAGE(entry != nullptr, path << " has no entry");
    const audiod_module* module = entry();
    BOOST_REQUIRE_MESSAGE(module != nullptr && module->abi_version == AUDIOD_MODULE_ABI_VERSION,
                          path << " is not a module of this ABI");
    return *module;
}

std::span<const audiod_option_spec> sink_option_specs(const audiod_module& module) {
    return module.sink != nullptr ? specs(module.sink->option_specs, module.sink->option_spec_count)
                                  : std::span<const audiod_option_spec>();
}

std::span<const audiod_option_spec> source_option_specs(const audiod_module& module) {
    return module.source != nullptr
               ? specs(module.source->option_specs, module.source->option_spec_count)
               : std::span<const audiod_option_spec>();
}

} // namespace audiod::test
