// libasound_module_ctl_audiod.so: the ALSA control type "audiod", so that
// amixer and alsamixer (`-D audiod`) show and set audiod's volumes:
//
//   Master         the default sink
//   Sink NAME      each sink
//   App NAME       each application playing now or remembered by the server
//
// each as a "... Playback Volume" (0-100, percent of unity gain) and a
// "... Playback Switch" (on = not muted) element, which ALSA's simple mixer
// shows as one control. The element list is read from the server when
// ALSA asks for it; values are read fresh (at most 50 ms old). With events
// subscribed, the server's volume and mute events become ALSA value events,
// so alsamixer follows changes made elsewhere (audioctl, other mixers).
//
// It speaks audiod's control protocol directly, as audioctl does, over the
// socket libaudiod would use ($AUDIOD_SOCKET, ...). Every request has a
// deadline: a stalled server makes a mixer call fail, never hang.
#include "plugin_config.h"
#include "plugin_errors.h"
#include "protocol/messages.h"
#include "protocol/request_channel.h"
#include "protocol/socket_path.h"

#include <alsa/asoundlib.h>
#include <alsa/control_external.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>
#include <deque>
#include <new>
#include <string>
#include <vector>

namespace {

using audiod::alsa_plugin::to_errno;

namespace proto = audiod::proto;
using Clock = std::chrono::steady_clock;

constexpr int kRequestMs = 1000;
constexpr auto kFreshFor = std::chrono::milliseconds(50);
// Room for the name in an ALSA element id (44 bytes with the terminator)
// once " Playback Volume" and a "Sink "/"App " prefix are added.
constexpr size_t kMaxShownName = 22;

enum class Owner { master, sink, app };

struct Element {
    Owner owner = Owner::master;
    std::string target;  // sink or application name ("" for master)
    std::string id_name; // ALSA element name
    unsigned id_index = 0;
    bool is_switch = false;
};

struct Snapshot {
    std::vector<proto::SinkInfo> sinks;
    std::vector<proto::AppInfo> apps;
    std::string default_sink;
    Clock::time_point taken{};
};

struct AudiodCtl {
    snd_ctl_ext_t ext{};
    proto::RequestChannel channel;
    std::vector<Element> elements;
    Snapshot snapshot;
    std::deque<size_t> pending; // elements with a value event to report
};

AudiodCtl& ctl_of(snd_ctl_ext_t* ext) {
    return *static_cast<AudiodCtl*>(ext->private_data);
}

template <class Request, class Reply>
int fetch(AudiodCtl& ctl, Reply* reply) {
    return ctl.channel.call_for(Request{}, reply, audiod::Deadline::after_ms(kRequestMs));
}

int refresh(AudiodCtl& ctl, bool force) {
    if (!force && Clock::now() - ctl.snapshot.taken < kFreshFor) {
        return 0;
    }
    proto::SinkList sinks;
    proto::AppList apps;
    proto::ServerInfo info;
    int rc = fetch<proto::ListSinks>(ctl, &sinks);
    rc = rc != 0 ? rc : fetch<proto::ListApps>(ctl, &apps);
    rc = rc != 0 ? rc : fetch<proto::GetInfo>(ctl, &info);
    if (rc != 0) {
        // Said here, so that a mixer program's bare "failed" has a reason.
        SNDERR("audiod: cannot read the server's volumes: %s %s", audiod_strerror(rc),
               ctl.channel.last_error().c_str());
        return to_errno(rc);
    }
    ctl.snapshot.sinks = std::move(sinks.sinks);
    // A mixer shows the applications that play or have settings, not every
    // one the server remembers having played.
    std::erase_if(apps.apps, [](const proto::AppInfo& app) {
        return app.streams == 0 && !app.remembered && !app.rule;
    });
    ctl.snapshot.apps = std::move(apps.apps);
    ctl.snapshot.default_sink = info.default_sink;
    ctl.snapshot.taken = Clock::now();
    return 0;
}

// The volume/switch pair of one owner. Names too long for ALSA are cut; two
// cut to the same text are told apart by the element index.
void add_pair(std::vector<Element>& out, Owner owner, const std::string& target,
              const std::string& prefix) {
    const std::string shown = prefix + target.substr(0, kMaxShownName);
    unsigned index = 0;
    for (const Element& e : out) {
        if (!e.is_switch && e.id_name == shown + " Playback Volume") {
            index = std::max(index, e.id_index + 1);
        }
    }
    out.push_back({owner, target, shown + " Playback Volume", index, false});
    out.push_back({owner, target, shown + " Playback Switch", index, true});
}

void rebuild_elements(AudiodCtl& ctl) {
    std::vector<Element> out;
    if (!ctl.snapshot.default_sink.empty()) {
        out.push_back({Owner::master, "", "Master Playback Volume", 0, false});
        out.push_back({Owner::master, "", "Master Playback Switch", 0, true});
    }
    for (const auto& sink : ctl.snapshot.sinks) {
        add_pair(out, Owner::sink, sink.name, "Sink ");
    }
    for (const auto& app : ctl.snapshot.apps) {
        add_pair(out, Owner::app, app.name, "App ");
    }
    ctl.elements = std::move(out);
    ctl.pending.clear(); // they index the old list
}

// The volume and mute an element shows; false if its owner is gone.
bool current(const AudiodCtl& ctl, const Element& e, float* volume, bool* muted) {
    const std::string& sink = e.owner == Owner::master ? ctl.snapshot.default_sink : e.target;
    if (e.owner == Owner::app) {
        for (const auto& app : ctl.snapshot.apps) {
            if (app.name == e.target) {
                *volume = app.volume;
                *muted = app.muted;
                return true;
            }
        }
        return false;
    }
    for (const auto& s : ctl.snapshot.sinks) {
        if (s.name == sink) {
            *volume = s.volume;
            *muted = s.muted;
            return true;
        }
    }
    return false;
}

const Element* element_at(const AudiodCtl& ctl, snd_ctl_ext_key_t key) {
    return key < ctl.elements.size() ? &ctl.elements[key] : nullptr;
}

// ---- callbacks ---------------------------------------------------------------

int ctl_elem_count(snd_ctl_ext_t* ext) {
    AudiodCtl& ctl = ctl_of(ext);
    if (const int rc = refresh(ctl, true); rc < 0) {
        return rc;
    }
    rebuild_elements(ctl);
    return static_cast<int>(ctl.elements.size());
}

int ctl_elem_list(snd_ctl_ext_t* ext, unsigned int offset, snd_ctl_elem_id_t* id) {
    const AudiodCtl& ctl = ctl_of(ext);
    if (offset >= ctl.elements.size()) {
        return -EINVAL;
    }
    snd_ctl_elem_id_set_interface(id, SND_CTL_ELEM_IFACE_MIXER);
    snd_ctl_elem_id_set_name(id, ctl.elements[offset].id_name.c_str());
    snd_ctl_elem_id_set_index(id, ctl.elements[offset].id_index);
    return 0;
}

snd_ctl_ext_key_t ctl_find_elem(snd_ctl_ext_t* ext, const snd_ctl_elem_id_t* id) {
    const AudiodCtl& ctl = ctl_of(ext);
    const unsigned numid = snd_ctl_elem_id_get_numid(id);
    if (numid > 0 && numid <= ctl.elements.size()) {
        return numid - 1;
    }
    const char* name = snd_ctl_elem_id_get_name(id);
    const unsigned index = snd_ctl_elem_id_get_index(id);
    for (size_t i = 0; i < ctl.elements.size(); ++i) {
        if (ctl.elements[i].id_name == name && ctl.elements[i].id_index == index) {
            return i;
        }
    }
    return SND_CTL_EXT_KEY_NOT_FOUND;
}

int ctl_get_attribute(snd_ctl_ext_t* ext, snd_ctl_ext_key_t key, int* type, unsigned int* acc,
                      unsigned int* count) {
    const Element* e = element_at(ctl_of(ext), key);
    if (e == nullptr) {
        return -EINVAL;
    }
    *type = e->is_switch ? SND_CTL_ELEM_TYPE_BOOLEAN : SND_CTL_ELEM_TYPE_INTEGER;
    *acc = SND_CTL_EXT_ACCESS_READWRITE;
    *count = 1;
    return 0;
}

int ctl_get_integer_info(snd_ctl_ext_t*, snd_ctl_ext_key_t, long* imin, long* imax, long* istep) {
    *imin = 0;
    *imax = 100;
    *istep = 1;
    return 0;
}

// The element behind `key` with what it shows now (read at most 50 ms ago).
// Returns 0, or -EINVAL (no such key), -ENOENT (its owner is gone), or the
// server's error.
int look_up(AudiodCtl& ctl, snd_ctl_ext_key_t key, const Element** e, float* volume, bool* muted) {
    *e = element_at(ctl, key);
    if (*e == nullptr) {
        return -EINVAL;
    }
    if (const int rc = refresh(ctl, false); rc < 0) {
        return rc;
    }
    // Silent: an application that stopped playing leaves its element
    // behind until the mixer rebuilds its list, which is no error to print
    // (over alsamixer's screen, say).
    return current(ctl, **e, volume, muted) ? 0 : -ENOENT;
}

int ctl_read_integer(snd_ctl_ext_t* ext, snd_ctl_ext_key_t key, long* value) {
    AudiodCtl& ctl = ctl_of(ext);
    const Element* e = nullptr;
    float volume = 1.0f;
    bool muted = false;
    if (const int rc = look_up(ctl, key, &e, &volume, &muted); rc < 0) {
        return rc;
    }
    *value = e->is_switch ? (muted ? 0 : 1) : std::clamp(std::lround(volume * 100.0f), 0L, 100L);
    return 0;
}

int ctl_write_integer(snd_ctl_ext_t* ext, snd_ctl_ext_key_t key, long* value) {
    AudiodCtl& ctl = ctl_of(ext);
    const Element* e = nullptr;
    float volume = 1.0f;
    bool muted = false;
    if (const int rc = look_up(ctl, key, &e, &volume, &muted); rc < 0) {
        return rc;
    }
    const uint32_t target = static_cast<uint32_t>(
        e->owner == Owner::app ? proto::VolumeTarget::app : proto::VolumeTarget::sink);
    const std::string name = e->owner == Owner::master ? ctl.snapshot.default_sink : e->target;
    int rc = 0;
    if (e->is_switch) {
        const bool mute = *value == 0;
        if (mute == muted) {
            return 0;
        }
        proto::SetMute request;
        request.target = target;
        request.name = name;
        request.mode = static_cast<uint32_t>(mute ? proto::MuteMode::on : proto::MuteMode::off);
        rc = ctl.channel.call(request, proto::MsgType::ok, nullptr,
                              audiod::Deadline::after_ms(kRequestMs));
    } else {
        const long percent = std::clamp(*value, 0L, 100L);
        if (percent == std::lround(volume * 100.0f)) {
            return 0;
        }
        proto::SetVolume request;
        request.target = target;
        request.name = name;
        request.mode = static_cast<uint32_t>(proto::VolumeMode::absolute);
        request.value = static_cast<float>(percent) / 100.0f;
        rc = ctl.channel.call(request, proto::MsgType::ok, nullptr,
                              audiod::Deadline::after_ms(kRequestMs));
    }
    if (rc != 0) {
        SNDERR("audiod: %s", ctl.channel.last_error().c_str());
        return to_errno(rc);
    }
    ctl.snapshot.taken = {}; // read back fresh
    return 1;
}

void ctl_subscribe_events(snd_ctl_ext_t* ext, int subscribe) {
    AudiodCtl& ctl = ctl_of(ext);
    if (subscribe != 0) {
        [[maybe_unused]] const int rc =
            ctl.channel.call(proto::Subscribe{}, proto::MsgType::ok, nullptr,
                             audiod::Deadline::after_ms(kRequestMs));
    }
}

// A server event that changes what elements show becomes a value event
// for each of them (ALSA reads them one at a time until -EAGAIN).
int ctl_read_event(snd_ctl_ext_t* ext, snd_ctl_elem_id_t* id, unsigned int* event_mask) {
    AudiodCtl& ctl = ctl_of(ext);
    if (ctl.pending.empty()) {
        if (ctl.channel.pump() != 0) {
            return -ENODEV;
        }
        proto::Event event;
        while (ctl.channel.take_event(event)) {
            const bool app = event.kind == "app-changed";
            const bool sink = event.kind == "sink-changed" || event.kind == "default-changed";
            if (!app && !sink) {
                continue;
            }
            ctl.snapshot.taken = {};
            for (size_t i = 0; i < ctl.elements.size(); ++i) {
                const Element& e = ctl.elements[i];
                const bool master = e.owner == Owner::master && sink;
                const bool named = e.owner == (app ? Owner::app : Owner::sink) &&
                                   e.target == (app ? event.app : event.device);
                if ((master || named) &&
                    std::find(ctl.pending.begin(), ctl.pending.end(), i) == ctl.pending.end()) {
                    ctl.pending.push_back(i);
                }
            }
        }
    }
    if (ctl.pending.empty()) {
        return -EAGAIN;
    }
    const Element& e = ctl.elements[ctl.pending.front()];
    ctl.pending.pop_front();
    snd_ctl_elem_id_set_interface(id, SND_CTL_ELEM_IFACE_MIXER);
    snd_ctl_elem_id_set_name(id, e.id_name.c_str());
    snd_ctl_elem_id_set_index(id, e.id_index);
    *event_mask = SND_CTL_EVENT_MASK_VALUE;
    return 1;
}

void ctl_close(snd_ctl_ext_t* ext) {
    delete &ctl_of(ext);
}

const snd_ctl_ext_callback_t kCallbacks = [] {
    snd_ctl_ext_callback_t c{};
    c.close = ctl_close;
    c.elem_count = ctl_elem_count;
    c.elem_list = ctl_elem_list;
    c.find_elem = ctl_find_elem;
    c.get_attribute = ctl_get_attribute;
    c.get_integer_info = ctl_get_integer_info;
    c.read_integer = ctl_read_integer;
    c.write_integer = ctl_write_integer;
    c.subscribe_events = ctl_subscribe_events;
    c.read_event = ctl_read_event;
    return c;
}();

int open_ctl(snd_ctl_t** handlep, const char* name, snd_config_t* conf, int mode) {
    if (const int err = audiod::alsa_plugin::read_fields(conf, {}); err < 0) {
        return err;
    }
    auto* ctl = new (std::nothrow) AudiodCtl;
    if (ctl == nullptr) {
        return -ENOMEM;
    }
    std::string socket;
    int rc = ctl->channel.connect_first(audiod::client_socket_paths(), &socket);
    proto::Hello hello;
    hello.app_name = "alsa-mixer";
    proto::HelloReply reply;
    rc =
        rc != 0 ? rc : ctl->channel.call_for(hello, &reply, audiod::Deadline::after_ms(kRequestMs));
    if (rc != 0) {
        if (socket.empty()) {
            for (const std::string& path : audiod::client_socket_paths()) {
                socket += (socket.empty() ? "" : " or ") + path;
            }
        }
        SNDERR("audiod: cannot reach the audiod server at %s: %s", socket.c_str(),
               audiod_strerror(rc));
        delete ctl;
        return to_errno(rc);
    }
    if (const int err = refresh(*ctl, true); err < 0) {
        delete ctl;
        return err;
    }
    rebuild_elements(*ctl);
    snd_ctl_ext_t& ext = ctl->ext;
    ext.version = SND_CTL_EXT_VERSION;
    ext.card_idx = 0;
    std::strncpy(ext.id, "audiod", sizeof ext.id - 1);
    std::strncpy(ext.driver, "audiod", sizeof ext.driver - 1);
    std::strncpy(ext.name, "audiod", sizeof ext.name - 1);
    std::strncpy(ext.longname, "audiod sound server", sizeof ext.longname - 1);
    std::strncpy(ext.mixername, "audiod", sizeof ext.mixername - 1);
    ext.poll_fd = ctl->channel.fd();
    ext.callback = &kCallbacks;
    ext.private_data = ctl;
    const int err = snd_ctl_ext_create(&ext, name, mode);
    if (err < 0) {
        delete ctl;
        return err;
    }
    *handlep = ext.handle;
    return 0;
}

} // namespace

extern "C" SND_CTL_PLUGIN_DEFINE_FUNC(audiod) {
    (void)root;
    return open_ctl(handlep, name, conf, mode);
}

// In a block, so that C++ reads it as a definition, not a declaration.
extern "C" {
SND_CTL_PLUGIN_SYMBOL(audiod)
}
