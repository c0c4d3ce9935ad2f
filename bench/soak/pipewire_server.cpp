// The soak against PipeWire (--server pipewire), for the side by side of
// issue 42: PipeWire 0.3.65 with WirePlumber and pipewire-pulse, on a
// private runtime directory and session bus, its sinks null sinks driven
// by its own timer, as ../shared/bench's adapter runs it. What the soak
// asks of it goes through pactl (pipewire-pulse): the events both servers
// can do, in audioctl's words translated (pactl_command).
#include "soak.h"

#include <csignal>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

namespace audiod::soak {

namespace {

// The ALSA plugin of PipeWire: installed (pipewire-alsa), or unpacked
// where ../shared/bench/setup.sh puts it.
std::string pipewire_alsa_root(const std::string& given) {
    for (const std::string& root : {given, std::string("/"), std::string("/tmp/bench/pwalsa")}) {
        if (!root.empty() && std::filesystem::exists(root + "/usr/lib/x86_64-linux-gnu/alsa-lib/"
                                                            "libasound_module_pcm_pipewire.so")) {
            return root;
        }
    }
    return "";
}

} // namespace

std::string pipewire_properties(const std::string& app, const std::string& more) {
    return "{ application.name = \"" + app + "\" media.role = \"" + app + "\" " + more + " }";
}

std::vector<std::string> pw_cat_command(const char* mode, const std::string& target,
                                        const std::string& app, const std::string& more) {
    return {"/usr/bin/pw-cat", mode,  "--target", target,
            "--media-role",    app,   "-P",       pipewire_properties(app, more),
            "--format",        "s16", "--rate",   "48000",
            "--channels",      "2",   "-"};
}

bool Soak::start_pipewire() {
    const std::string config = dir_ + "/config/pipewire/pipewire.conf.d";
    std::filesystem::create_directories(config);
    std::filesystem::create_directories(dir_ + "/pulse");
    std::ofstream conf(config + "/soak.conf");
    conf << "context.properties = { default.clock.rate = 48000 default.clock.allowed-rates = [ "
            "48000 ] }\ncontext.objects = [\n";
    const int count = o_.streams + 4;
    for (int i = 0; i < count; ++i) {
        std::string name = "s";
        name.append(std::to_string(i));
        sinks_.push_back({name, 0, 0});
        conf << "  { factory = adapter args = { factory.name = support.null-audio-sink node.name = "
             << name
             << " media.class = Audio/Sink object.linger = true audio.position = [ FL FR ] "
                "audio.rate = 48000 monitor.channel-volumes = true node.driver = true } }\n";
    }
    conf << "]\n";
    conf.close();
    setenv("XDG_CONFIG_HOME", (dir_ + "/config").c_str(), 1);
    setenv("LC_ALL", "C", 1); // pactl's words, which pactl_command reads, untranslated
    setenv("PIPEWIRE_RUNTIME_DIR", dir_.c_str(), 1);
    setenv("PULSE_RUNTIME_PATH", (dir_ + "/pulse").c_str(), 1);
    setenv("PULSE_SERVER", ("unix:" + dir_ + "/pulse/native").c_str(), 1);
    setenv("DBUS_SESSION_BUS_ADDRESS", ("unix:path=" + dir_ + "/bus").c_str(), 1);
    const std::string root = pipewire_alsa_root(o_.pipewire_alsa);
    if (root.empty()) {
        std::fprintf(stderr, "audiod-soak: PipeWire's ALSA plugin is not installed (apt-get "
                             "install pipewire-alsa, or ../shared/bench/setup.sh); give its root "
                             "with --pipewire-alsa\n");
        return false;
    }
    {
        std::ofstream alsa(dir_ + "/alsa-pipewire.conf");
        std::ifstream system("/usr/share/alsa/alsa.conf");
        alsa << system.rdbuf() << "\n";
        const std::string lib = root + "/usr/lib/x86_64-linux-gnu/alsa-lib/";
        alsa << "pcm_type.pipewire { lib \"" << lib << "libasound_module_pcm_pipewire.so\" }\n"
             << "ctl_type.pipewire { lib \"" << lib << "libasound_module_ctl_pipewire.so\" }\n";
        std::ifstream pcm(root + "/usr/share/alsa/alsa.conf.d/50-pipewire.conf");
        alsa << pcm.rdbuf();
    }
    setenv("ALSA_CONFIG_PATH", (dir_ + "/alsa-pipewire.conf").c_str(), 1);
    // The bus first, always helpers_[0] (stop_bus's), -1 if it did not
    // start; a helper that did not start is not waited for.
    helpers_.push_back(spawn({"/usr/bin/dbus-daemon", "--session",
                              "--address=unix:path=" + dir_ + "/bus", "--nofork", "--nopidfile"},
                             dir_ + "/dbus.log"));
    server_ = spawn({"/usr/bin/pipewire"}, dir_ + "/audiod.log");
    if (helpers_.front() <= 0 || server_ <= 0) {
        std::fprintf(stderr, "audiod-soak: dbus-daemon or pipewire did not start\n");
        return false;
    }
    std::string out;
    for (int i = 0; i < 100 && !std::filesystem::exists(dir_ + "/pipewire-0"); ++i) {
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    for (const char* helper : {"/usr/bin/wireplumber", "/usr/bin/pipewire-pulse"}) {
        const pid_t pid = spawn(
            {helper}, dir_ + "/" + std::filesystem::path(helper).filename().string() + ".log");
        if (pid <= 0) {
            std::fprintf(stderr, "audiod-soak: %s did not start\n", helper);
            return false;
        }
        helpers_.push_back(pid);
    }
    for (int i = 0; i < 200; ++i) {
        if (audiod::soak::run({"/usr/bin/pactl", "list", "sinks", "short"}, out, 5000) == 0 &&
            out.find(sinks_.back().name + "\t") != std::string::npos) {
            return true;
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    std::fprintf(stderr, "audiod-soak: PipeWire did not offer its sinks: %s\n", out.c_str());
    return false;
}

void Soak::stop_pipewire() {
    // pipewire-pulse and WirePlumber first (the helpers after the bus),
    // then PipeWire (its status is the caller's to wait for), then the bus.
    for (size_t i = helpers_.size(); i-- > 1;) {
        end_process(helpers_[i], 10000);
    }
    if (server_ > 0) {
        kill(server_, SIGTERM);
    }
}

void Soak::stop_bus() {
    if (!helpers_.empty()) {
        end_process(helpers_.front(), 10000);
    }
    helpers_.clear();
}

// audioctl's words, said to pactl: list streams (printed as audioctl
// prints them: ID APP SINK ... PID, the pid left out: pactl knows none
// for a native PipeWire stream, and the soak finds its players by their
// application's name), move-stream, set-volume and mute of a stream or a
// sink.
bool Soak::pactl_command(const std::vector<std::string>& args, std::string& out) {
    std::vector<std::string> argv = {"/usr/bin/pactl"};
    const auto target = [&](const std::string& t, const char* stream_cmd, const char* sink_cmd) {
        if (t.rfind("sink:", 0) == 0) {
            argv.push_back(sink_cmd);
            argv.push_back(t.substr(5));
        } else {
            argv.push_back(stream_cmd);
            argv.push_back(t);
        }
    };
    if (args.size() == 2 && args[0] == "list" && args[1] == "streams") {
        std::string sinks;
        if (audiod::soak::run({"/usr/bin/pactl", "list", "sinks", "short"}, sinks, 10000) != 0) {
            out = sinks;
            return false;
        }
        std::map<std::string, std::string> sink_names; // index -> name
        std::istringstream sink_lines(sinks);
        for (std::string line; std::getline(sink_lines, line);) {
            std::istringstream words(line);
            std::string index, name;
            words >> index >> name;
            sink_names[index] = name;
        }
        std::string inputs;
        if (audiod::soak::run({"/usr/bin/pactl", "list", "sink-inputs"}, inputs, 10000) != 0) {
            out = inputs;
            return false;
        }
        std::istringstream lines(inputs);
        std::string id, sink, app;
        const auto flush = [&] {
            if (!id.empty()) {
                out += id + " " + (app.empty() ? "-" : app) + " " + sink + "\n";
            }
            id.clear();
            app.clear();
            sink.clear();
        };
        out = "ID APP SINK\n";
        for (std::string line; std::getline(lines, line);) {
            const auto text = line.substr(line.find_first_not_of(" \t") == std::string::npos
                                              ? line.size()
                                              : line.find_first_not_of(" \t"));
            if (text.rfind("Sink Input #", 0) == 0) {
                flush();
                id = text.substr(12);
            } else if (text.rfind("Sink: ", 0) == 0) {
                sink = sink_names[text.substr(6)];
            } else if (text.rfind("application.name = \"", 0) == 0) {
                app = text.substr(20, text.size() - 21);
            }
        }
        flush();
        return true;
    }
    if (args.size() == 3 && args[0] == "move-stream") {
        argv.insert(argv.end(), {"move-sink-input", args[1], args[2]});
    } else if (args.size() == 3 && args[0] == "set-volume") {
        target(args[1], "set-sink-input-volume", "set-sink-volume");
        argv.push_back(args[2]);
    } else if (args.size() == 3 && args[0] == "mute") {
        target(args[1], "set-sink-input-mute", "set-sink-mute");
        argv.push_back(args[2] == "on" ? "1" : "0");
    } else {
        out = "not asked of PipeWire";
        return false;
    }
    const int status = audiod::soak::run(argv, out, 10000);
    if (status != 0 && out.find("No such entity") != std::string::npos) {
        out = "no stream with id " + args[1]; // as audioctl says it
    }
    return status == 0;
}

} // namespace audiod::soak
