// Finds and loads sink modules (see audiod/module.h for the ABI).
#pragma once

#include "audiod/module.h"

#include <map>
#include <memory>
#include <string>
#include <variant>
#include <vector>

namespace audiod {

class ModuleLoader {
public:
    explicit ModuleLoader(std::string directory)
        : directory_(std::move(directory)) {}
    ModuleLoader(const ModuleLoader&) = delete;
    ModuleLoader& operator=(const ModuleLoader&) = delete;
    ~ModuleLoader();

    // Loads DIRECTORY/TYPE.so once and checks its descriptor. The module stays
    // loaded for the loader's lifetime. Thread: control.
    std::variant<const audiod_module*, std::string> load(const std::string& type);

    // The types whose modules are in the directory (every TYPE.so), sorted.
    [[nodiscard]] std::vector<std::string> available_types() const;

    // The optional device listing of a module load() has loaded (see
    // AUDIOD_MODULE_DEVICES_SYMBOL), or nullptr if it has none.
    [[nodiscard]] audiod_module_devices_fn devices_function(const std::string& type) const;

    // Makes `module` available under `type` without a shared object (for
    // tests that drive the engine with an in-process device).
    void add_builtin(const std::string& type, const audiod_module* module) {
        loaded_[type] = {nullptr, module};
    }

    [[nodiscard]] const std::string& directory() const noexcept { return directory_; }

private:
    std::string directory_;
    std::map<std::string, std::pair<void*, const audiod_module*>> loaded_;
};

// The module directory for the running executable: $AUDIOD_MODULE_DIR if set,
// else EXE_DIR/../lib/audiod/modules (the same in the build tree and in an
// installed tree).
[[nodiscard]] std::string default_module_directory();

} // namespace audiod
