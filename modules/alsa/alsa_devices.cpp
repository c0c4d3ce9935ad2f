// The ALSA PCMs that a `device` option can name, for `audiod
// --list-devices`: what ALSA's name hints offer (aplay -L shows the same):
// the cards' hw:, plughw:, sysdefault: ... names and the configuration's
// PCMs that carry a `hint { show on }`. A hint says which way a PCM goes,
// never its channels or rates: knowing those means opening the device,
// which can take a busy card away from another program, so this does not.
#include "audiod/module.h"
#include "device_options.h"

#include <alsa/asoundlib.h>

#include <cerrno>
#include <cstdlib>
#include <string>

namespace {

// A hint's field as a string ("" if absent); ALSA allocates it.
std::string hint_field(const void* hint, const char* id) {
    char* value = snd_device_name_get_hint(hint, id);
    std::string text = value != nullptr ? value : "";
    std::free(value);
    return text;
}

} // namespace

extern "C" __attribute__((visibility("default"))) int
audiod_module_devices(audiod_device_fn emit, void* context, char* error, size_t error_size) {
    void** hints = nullptr;
    if (const int err = snd_device_name_hint(-1, "pcm", &hints); err < 0) {
        audiod::set_error(error, error_size,
                          std::string("cannot list ALSA devices: ") + snd_strerror(err));
        return err;
    }
    for (void** hint = hints; *hint != nullptr; ++hint) {
        const std::string name = hint_field(*hint, "NAME");
        if (name.empty()) {
            continue;
        }
        std::string description = hint_field(*hint, "DESC");
        // Descriptions come in two lines (card, then device): one will do.
        for (char& c : description) {
            c = c == '\n' ? ' ' : c;
        }
        const std::string direction = hint_field(*hint, "IOID"); // absent: both ways
        audiod_device_info info{};
        info.api = "alsa";
        info.name = name.c_str();
        info.description = description.c_str();
        info.index = -1;
        info.playback = direction != "Input";
        info.capture = direction != "Output";
        emit(context, &info);
    }
    snd_device_name_free_hint(hints);
    return 0;
}
