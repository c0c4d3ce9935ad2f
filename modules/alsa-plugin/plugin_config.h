// Reading a plugin's fields from its ALSA configuration block, shared by
// the PCM and the control plugin: the standard fields (comment, type, hint)
// are skipped, string and integer fields a plugin knows are handed to it,
// and anything else is refused with a message naming the fields it takes.
#pragma once

#include <alsa/asoundlib.h>

#include <cerrno>
#include <cstdlib>
#include <string>
#include <utility>
#include <vector>

namespace audiod::alsa_plugin {

// An integer, or a string of decimal digits (what "@args" hands over).
inline bool read_integer(snd_config_t* node, long& value) {
    if (snd_config_get_integer(node, &value) >= 0) {
        return true;
    }
    const char* text = nullptr;
    if (snd_config_get_string(node, &text) < 0 || text == nullptr || *text == '\0') {
        return false;
    }
    char* end = nullptr;
    errno = 0;
    const long parsed = std::strtol(text, &end, 10);
    if (errno != 0 || *end != '\0') {
        return false;
    }
    value = parsed;
    return true;
}

// Fills `fields` and `integers` (name -> value) from `conf`; 0, or -EINVAL
// after SNDERR. An integer field may also be written as a string of digits.
inline int read_fields(snd_config_t* conf, std::vector<std::pair<std::string, std::string*>> fields,
                       std::vector<std::pair<std::string, long*>> integers = {}) {
    snd_config_iterator_t i;
    snd_config_iterator_t next;
    snd_config_for_each(i, next, conf) {
        snd_config_t* node = snd_config_iterator_entry(i);
        const char* id = nullptr;
        if (snd_config_get_id(node, &id) < 0) {
            continue;
        }
        const std::string key = id;
        if (key == "comment" || key == "type" || key == "hint") {
            continue;
        }
        bool known = false;
        for (auto& [name, value] : fields) {
            const char* text = nullptr;
            if (key == name && snd_config_get_string(node, &text) >= 0) {
                *value = text;
                known = true;
            }
        }
        for (auto& [name, value] : integers) {
            if (key != name) {
                continue;
            }
            if (!read_integer(node, *value)) {
                SNDERR("audiod: %s must be a whole number", id);
                return -EINVAL;
            }
            known = true;
        }
        if (!known) {
            std::string names;
            for (const auto& field : fields) {
                names += (names.empty() ? "" : ", ") + field.first;
            }
            for (const auto& field : integers) {
                names += (names.empty() ? "" : ", ") + field.first;
            }
            SNDERR("audiod: unknown field %s (%s)", id,
                   names.empty() ? "it takes none" : ("it takes " + names).c_str());
            return -EINVAL;
        }
    }
    return 0;
}

} // namespace audiod::alsa_plugin
