// PulseAudio's modules, as far as audiod has them. `pactl load-module
// module-null-sink sink_name=x` is how scripts and desktop tools make a
// virtual sink; here it opens an audiod null sink named x, and the module
// stands for that sink until it is unloaded (which closes the sink) or the
// sink goes some other way (`audioctl unload-sink`: the module goes too).
// Every other module is refused: audiod's own devices and configuration do
// what they did. A PulseAudio module is not an audiod module (a device
// type's plugin); the word "pulse module" is kept for the first.
// Thread: any (pure), the table: pulse.
#pragma once

#include "engine/engine_options.h"
#include "pulse/tagstruct.h"

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <variant>

namespace audiod::pulse {

inline constexpr std::string_view kNullSinkModule = "module-null-sink";

// A module argument string ("sink_name=x sink_properties='a=b c=d'") as
// keys and values: values may be quoted with ' or ", and a backslash takes
// the next character as it is. nullopt if it cannot be read (`error` says
// why): a key without '=', an unclosed quote, a key given twice.
[[nodiscard]] std::optional<std::map<std::string, std::string>>
parse_module_arguments(std::string_view text, std::string& error);

// What module-null-sink's arguments ask audiod for.
struct NullSinkPlan {
    std::string name;        // sink_name, "null" if not given
    std::string description; // sink_properties' device.description, if any
    OptionList options;      // rate, channels
};

// The plan for module-null-sink's arguments, or why they cannot be met
// (an unknown argument, one that cannot be read). `format` and
// `channel_map` are taken and not used: audiod mixes in float and maps
// channels by their count. The rate and channel count are checked where
// every sink's are, when the sink is opened.
[[nodiscard]] std::variant<NullSinkPlan, std::string> plan_null_sink(std::string_view arguments);

struct PulseModule {
    uint32_t index = 0;
    std::string name;
    std::string argument;
    std::string sink;        // the audiod sink it stands for
    std::string description; // the sink's, if the arguments gave one
};

// The loaded pulse modules by index; an index is never given twice.
class PulseModules {
public:
    uint32_t add(std::string name, std::string argument, std::string sink, std::string description);
    [[nodiscard]] const PulseModule* find(uint32_t index) const;
    [[nodiscard]] const PulseModule* owner_of(const std::string& sink) const;
    // Forgets the module of a sink that is gone; its index, if it had one.
    std::optional<uint32_t> forget_sink(const std::string& sink);
    [[nodiscard]] const std::map<uint32_t, PulseModule>& all() const noexcept { return modules_; }

private:
    std::map<uint32_t, PulseModule> modules_;
    uint32_t next_ = 0;
};

// One GET_MODULE_INFO entry, by the client's protocol version; `used`:
// the streams on its sink.
void put_module(TagWriter& w, const PulseModule& module, uint32_t used, uint32_t version);

} // namespace audiod::pulse
