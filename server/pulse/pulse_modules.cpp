#include "pulse/pulse_modules.h"

#include <algorithm>
#include <array>
#include <cctype>

namespace audiod::pulse {

namespace {

bool is_space(char c) {
    return std::isspace(static_cast<unsigned char>(c)) != 0;
}

// Reads one value from `at`: quoted, or up to the next space.
std::optional<std::string> read_value(std::string_view text, size_t& at) {
    std::string value;
    const char quote = at < text.size() && (text[at] == '\'' || text[at] == '"') ? text[at] : 0;
    if (quote != 0) {
        ++at;
    }
    while (at < text.size()) {
        const char c = text[at];
        if (quote != 0 ? c == quote : is_space(c)) {
            break;
        }
        if (c == '\\') {
            if (++at == text.size()) {
                return std::nullopt;
            }
        }
        value.push_back(text[at++]);
    }
    if (quote != 0) {
        if (at == text.size()) {
            return std::nullopt;
        }
        ++at; // the closing quote
    }
    return value;
}

// PulseAudio's own argument names for module-null-sink.
constexpr std::array<std::string_view, 7> kNullSinkArguments = {
    "sink_name", "sink_properties", "format", "rate", "channels", "channel_map", "norewinds"};

} // namespace

std::optional<std::map<std::string, std::string>> parse_module_arguments(std::string_view text,
                                                                         std::string& error) {
    std::map<std::string, std::string> arguments;
    size_t at = 0;
    while (true) {
        while (at < text.size() && is_space(text[at])) {
            ++at;
        }
        if (at == text.size()) {
            return arguments;
        }
        const size_t key_start = at;
        while (at < text.size() && text[at] != '=' && !is_space(text[at])) {
            ++at;
        }
        const std::string key(text.substr(key_start, at - key_start));
        if (at == text.size() || text[at] != '=' || key.empty()) {
            error = "'" + key + "' has no value (write key=value)";
            return std::nullopt;
        }
        ++at;
        auto value = read_value(text, at);
        if (!value) {
            error = "the value of '" + key + "' does not end (an unclosed quote)";
            return std::nullopt;
        }
        if (!arguments.emplace(key, std::move(*value)).second) {
            error = "'" + key + "' is given twice";
            return std::nullopt;
        }
        if (at < text.size() && !is_space(text[at])) {
            error = "the value of '" + key + "' runs into the next argument";
            return std::nullopt;
        }
    }
}

std::variant<NullSinkPlan, std::string> plan_null_sink(std::string_view text) {
    std::string error;
    const auto arguments = parse_module_arguments(text, error);
    if (!arguments) {
        return error;
    }
    NullSinkPlan plan;
    plan.name = "null";
    for (const auto& [key, value] : *arguments) {
        if (std::find(kNullSinkArguments.begin(), kNullSinkArguments.end(), key) ==
            kNullSinkArguments.end()) {
            return "module-null-sink has no argument '" + key + "'";
        }
        if (key == "sink_name") {
            plan.name = value;
        } else if (key == "rate" || key == "channels") {
            plan.options.emplace_back(key, value);
        } else if (key == "sink_properties") {
            const auto properties = parse_module_arguments(value, error);
            if (!properties) {
                return "sink_properties: " + error;
            }
            if (const auto found = properties->find("device.description");
                found != properties->end()) {
                plan.description = found->second;
            }
        }
    }
    return plan;
}

uint32_t PulseModules::add(std::string name, std::string argument, std::string sink,
                           std::string description) {
    const uint32_t index = next_++;
    modules_[index] = PulseModule{index, std::move(name), std::move(argument), std::move(sink),
                                  std::move(description)};
    return index;
}

const PulseModule* PulseModules::find(uint32_t index) const {
    const auto it = modules_.find(index);
    return it == modules_.end() ? nullptr : &it->second;
}

const PulseModule* PulseModules::owner_of(const std::string& sink) const {
    for (const auto& [index, module] : modules_) {
        if (module.sink == sink) {
            return &module;
        }
    }
    return nullptr;
}

std::optional<uint32_t> PulseModules::forget_sink(const std::string& sink) {
    const PulseModule* module = owner_of(sink);
    if (module == nullptr) {
        return std::nullopt;
    }
    const uint32_t index = module->index;
    modules_.erase(index);
    return index;
}

void put_module(TagWriter& w, const PulseModule& module, uint32_t used, uint32_t version) {
    w.put_u32(module.index);
    w.put_string(module.name);
    w.put_string(module.argument);
    w.put_u32(used);
    if (version < 15) {
        w.put_bool(false); // auto-unload, long gone from PulseAudio
    } else {
        PropertyList properties;
        set_property(properties, "module.description", "an audiod null sink");
        w.put_proplist(properties);
    }
}

} // namespace audiod::pulse
