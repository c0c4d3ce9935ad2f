#include "engine/module_loader.h"

#include "os/executable_directory.h"

#include <algorithm>
#include <cstdlib>
#include <dirent.h>
#include <dlfcn.h>
#include <initializer_list>
#include <string_view>
#include <unistd.h>

namespace audiod {

namespace {

bool is_safe_type_name(const std::string& type) {
    if (type.empty() || type.size() > 64) {
        return false;
    }
    for (const char c : type) {
        const bool ok = (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' || c == '_';
        if (!ok) {
            return false;
        }
    }
    return true;
}

// The first of a table's required functions (name, present) that is
// missing, or "" (see audiod/module.h; `xruns` is optional in both tables).
std::string first_missing(std::initializer_list<std::pair<const char*, bool>> functions) {
    for (const auto& [name, present] : functions) {
        if (!present) {
            return name;
        }
    }
    return "";
}

// Why a module's descriptor breaks the ABI's promises, or "".
std::string descriptor_problem(const audiod_module* module, const std::string& type) {
    if (module == nullptr) {
        return "returned no descriptor from " AUDIOD_MODULE_ENTRY_SYMBOL "()";
    }
    if (module->abi_version != AUDIOD_MODULE_ABI_VERSION) {
        // Nothing past abi_version is read: the layout is another ABI's.
        return "was built for module ABI " + std::to_string(module->abi_version) +
               "; this audiod loads ABI " + std::to_string(AUDIOD_MODULE_ABI_VERSION) +
               " modules: rebuild it against this audiod's audiod/module.h";
    }
    if (module->name == nullptr || type != module->name) {
        return "names itself '" + std::string(module->name ? module->name : "") + "'";
    }
    if (module->sink == nullptr && module->source == nullptr) {
        return "provides neither a sink nor a source";
    }
    if (const audiod_sink_ops* ops = module->sink; ops != nullptr) {
        const std::string op = first_missing({{"open", ops->open != nullptr},
                                              {"start", ops->start != nullptr},
                                              {"wait", ops->wait != nullptr},
                                              {"write", ops->write != nullptr},
                                              {"stop", ops->stop != nullptr},
                                              {"close", ops->close != nullptr}});
        if (!op.empty()) {
            return "has no sink '" + op + "' function (required)";
        }
    }
    if (const audiod_source_ops* ops = module->source; ops != nullptr) {
        const std::string op = first_missing({{"open", ops->open != nullptr},
                                              {"start", ops->start != nullptr},
                                              {"wait", ops->wait != nullptr},
                                              {"read", ops->read != nullptr},
                                              {"stop", ops->stop != nullptr},
                                              {"close", ops->close != nullptr}});
        if (!op.empty()) {
            return "has no source '" + op + "' function (required)";
        }
    }
    return "";
}

} // namespace

ModuleLoader::~ModuleLoader() {
    for (auto& [type, entry] : loaded_) {
        if (entry.first != nullptr) {
            ::dlclose(entry.first);
        }
    }
}

std::variant<const audiod_module*, std::string> ModuleLoader::load(const std::string& type) {
    if (auto it = loaded_.find(type); it != loaded_.end()) {
        return it->second.second;
    }
    // The type comes from a config file or a client: never let it name a
    // path outside the module directory.
    if (!is_safe_type_name(type)) {
        return std::string("invalid sink type '") + type + "'";
    }
    const std::string path = directory_ + "/" + type + ".so";
    if (::access(path.c_str(), R_OK) != 0) {
        return std::string("unknown sink type '") + type + "' (no module " + path + ")";
    }
    // Never unmapped, even by dlclose: a module's libraries (PortAudio, and
    // libjack below it) may leave threads, atexit handlers or heap objects
    // behind that would point into unmapped code, or read as leaks.
    void* handle = ::dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL | RTLD_NODELETE);
    if (handle == nullptr) {
        return std::string("cannot load ") + path + ": " + ::dlerror();
    }
    auto entry =
        reinterpret_cast<audiod_module_entry_fn>(::dlsym(handle, AUDIOD_MODULE_ENTRY_SYMBOL));
    const audiod_module* module = entry != nullptr ? entry() : nullptr;
    const std::string problem = entry == nullptr ? "has no " AUDIOD_MODULE_ENTRY_SYMBOL "()"
                                                 : descriptor_problem(module, type);
    if (!problem.empty()) {
        ::dlclose(handle);
        return "module " + path + " " + problem;
    }
    loaded_.emplace(type, std::make_pair(handle, module));
    return module;
}

std::vector<std::string> ModuleLoader::available_types() const {
    std::vector<std::string> types;
    DIR* dir = ::opendir(directory_.c_str());
    if (dir == nullptr) {
        return types;
    }
    while (const dirent* entry = ::readdir(dir)) {
        const std::string name = entry->d_name;
        constexpr std::string_view suffix = ".so";
        if (name.size() > suffix.size() && name.ends_with(suffix)) {
            const std::string type = name.substr(0, name.size() - suffix.size());
            if (is_safe_type_name(type)) {
                types.push_back(type);
            }
        }
    }
    ::closedir(dir);
    std::sort(types.begin(), types.end());
    return types;
}

audiod_module_devices_fn ModuleLoader::devices_function(const std::string& type) const {
    const auto it = loaded_.find(type);
    if (it == loaded_.end() || it->second.first == nullptr) {
        return nullptr;
    }
    return reinterpret_cast<audiod_module_devices_fn>(
        ::dlsym(it->second.first, AUDIOD_MODULE_DEVICES_SYMBOL));
}

std::string default_module_directory() {
    if (const char* dir = std::getenv("AUDIOD_MODULE_DIR"); dir != nullptr && *dir != '\0') {
        return dir;
    }
    return executable_directory() + "/../" AUDIOD_MODULE_SUBDIR;
}

} // namespace audiod
