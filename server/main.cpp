// audiod: the server's entry point. Reads the configuration, takes the
// socket, opens the sinks and runs the control loop until SIGINT/SIGTERM.
#include "audiod/audiod.h"
#include "config/config.h"
#include "control/access_policy.h"
#include "control/control_server.h"
#include "control/instance_lock.h"
#include "engine/app_state.h"
#include "engine/device_listing.h"
#include "engine/engine.h"
#include "engine/module_loader.h"
#include "log.h"
#include "os/watchdog.h"
#include "protocol/socket_path.h"
#include "protocol/version.h"
#include "pulse/pulse_server.h"
#include "pulse/pulse_socket.h"
#include "service/service_notifier.h"
#include "service/socket_activation.h"

#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <getopt.h>
#include <grp.h>
#include <string>
#include <sys/stat.h>
#include <unistd.h>
#include <variant>
#include <vector>

namespace {

constexpr const char* kUsage = R"(Usage: audiod [OPTION]...
Run the audiod sound server in the foreground, logging to standard error.

audiod mixes the audio streams of its clients (players using libaudiod,
audioplay, the ALSA plugin) into sinks: sound cards, files, or a null sink
that only keeps time. Each sink runs on its own clock in a real-time thread
that never waits for a client, so one stalled player cannot disturb others.
Record streams (audiorec, arecord through the plugin) take audio from
sources: every sink's monitor (SINK.monitor: what it plays) and capture
devices. Streams may use any common format, 1-8 channels and 8-192 kHz:
the server converts.

Options:
  -c, --config FILE      read the configuration from FILE. Without it:
                         $XDG_CONFIG_HOME/audiod/audiod.conf (default
                         ~/.config/audiod/audiod.conf), then the installed
                         share/audiod/audiod.conf, then built-in defaults
                         (one sink, type "auto").
  -s, --socket PATH      listen on PATH instead of $AUDIOD_SOCKET, or
                         $XDG_RUNTIME_DIR/audiod/socket, or
                         /tmp/audiod-$UID/socket.
  -m, --module-dir DIR   load the sink and source modules from DIR instead of
                         $AUDIOD_MODULE_DIR or <prefix>/lib/audiod/modules.
      --state FILE       remember per-application volume, mute and sink, and
                         the default sink, in FILE instead of
                         $XDG_STATE_HOME/audiod/state (default
                         ~/.local/state/audiod/state). A corrupt file is
                         moved to FILE.corrupt and defaults are used.
      --system           run as the one server of a machine, for every user
                         in a group: listen on /run/audiod/socket, and for
                         libpulse programs on /run/pulse/native (mode
                         0660, the group's), read /etc/audiod/audiod.conf
                         (then the installed default), keep state in
                         /var/lib/audiod/state. Clients try their own
                         user's server first, then this one. Each user sees
                         and controls only their own clients, streams and
                         application settings; changing sinks, sources, the
                         default sink or reloading needs root, the server's
                         user, or --admin-group. Started as root, it should
                         run as a user of its own (audiod(8): STARTING).
      --group GROUP      with --system: the group whose members may connect
                         (default: audio).
      --admin-group GROUP
                         with --system: members of GROUP control everything.
      --check-config     parse the configuration, report, and exit.
                         SIGHUP (or `audioctl reload`) makes a running
                         server read it again: see below.
      --list-devices     list the devices that a sink's or source's `device`
                         option can name, as each module that opens them
                         sees them (ALSA PCMs; PortAudio devices with their
                         host API, channels, default rate and latency), and
                         exit. With --json, as a JSON array. Exit status 1
                         if a module could not list its devices.
      --json             with --list-devices: print JSON.
  -v, --verbose          log debugging detail (per-client events).
  -q, --quiet            log only warnings and errors.
  -h, --help             show this help and exit.
  -V, --version          show the version and exit.

Configuration (TOML):
  [server]
  rate = 48000           # Hz
  channels = 2
  quantum = 256          # frames per mixing cycle (5.3 ms at 48 kHz)
  default-sink = "main"  # where streams go when they name no sink
  default-source = "mic" # what record streams naming none record (default:
                         #   the default sink's monitor)
  rt-priority = 20       # SCHED_FIFO priority when permitted; 0 = never
  stall-timeout-ms = 1000  # a stream starved this long shows as stalled
  resample-quality = 5   # 0 (cheapest) .. 10 (best), for other stream rates
  client-memory-mb = 64  # stream buffers one client may hold (1..4096)

  [sinks.main]           # one table per sink
  type = "auto"          # ALSA "default" if a sound card exists, else null

  [sinks.speakers]
  type = "alsa"          # a sound card, driven by its own clock
  device = "hw:0,0"      # any ALSA PCM; periods = 3 quanta of buffer

  [sinks.oss]
  type = "portaudio"     # a device PortAudio reaches: ALSA, JACK, OSS
  device = "/dev/dsp"    # a name or part of one (audiod --list-devices),
  host-api = "oss"       #   or an index; latency-ms = 3 quanta queued

  [sinks.studio]
  type = "jack"          # a client of a JACK graph; back when jackd is
  connect = "physical"   # or "none", a client's name, a port regex;
                         #   server = "NAME" (jackd -n NAME)

  [sinks.recorder]
  type = "file"          # writes the mix to a WAV or FLAC file (by the path)
  path = "/tmp/mix.wav"
  format = "s16le"       # s16le, s32le or f32le
  rate = 44100           # any sink may set its own rate, channels, quantum

  [sinks.kitchen]
  type = "rtp"           # sends the mix as RTP (opus, l16, l24)
  destination = "239.1.2.3"  # a host or multicast group; announce = true: SAP

  [sources.mic]          # one table per capture device
  type = "alsa"          # records from an ALSA PCM, driven by its clock
  device = "hw:0,0"      # periods = 3 quanta of buffer

  [sources.studio]
  type = "rtp"           # receives RTP: a jitter buffer that follows the
  port = 46000           #   sender's clock (latency-ms = 40)
  sink = "speakers"      # any source may also play into a sink, as a stream
                         #   of application "TYPE:NAME" (rtp:studio)

  [sources.lan]
  type = "rtp"
  discover = true        # a source per session announced by SAP, named
  sink = "speakers"      #   after it, each playing into this sink

  [apps.mpv]             # what an application starts with (by the name it
  volume = "50%"         #   declares, else its executable's): a level as
  mute = false           #   audioctl takes it, mute, and a sink. A change
  sink = "speakers"      #   at run time wins until `audioctl forget app:mpv`

  [pulse]                # libpulse programs (paplay, pactl, Firefox): served
  enable = true          #   on $XDG_RUNTIME_DIR/pulse/native by a user's
                         #   server, unless PulseAudio or pipewire-pulse
                         #   serves it already (then left alone)

A sink or source whose device fails (unplugged) hands its streams to the
default sink (a source its recordings to the default sink's monitor) and is
reopened every second until the device is back.

Started by systemd (the user units audiod.socket and audiod.service), audiod
serves the socket it is passed ($LISTEN_FDS: one listening SOCK_SEQPACKET
socket, and the SOCK_STREAM pulse socket of audiod-pulse.socket if that unit
is enabled) and reports readiness ($NOTIFY_SOCKET) once its sinks are open;
the first client to connect starts it. Without systemd, start it
from a session's autostart (`exec audiod` in i3 or sway).

SIGHUP or `audioctl reload` reads the configuration again while streams
play: new sinks and sources are opened, removed ones closed (their streams
move to the default sink), changed ones reopened with their streams, and
[apps] rules replaced. A configuration with an error is refused as a whole,
with its file and line, and the running one stays.

Only one server runs per socket; a second one refuses to start. A socket left
behind by a crashed server is reclaimed. SIGINT and SIGTERM stop the server
cleanly (a file sink finishes its WAV header or FLAC stream).

Exit status: 0 after a clean stop, 1 on a configuration or start-up error,
2 on a usage error.
)";

struct Options {
    bool system = false;
    std::string group = "audio";
    std::string admin_group;
    std::string config_path;
    std::string socket_path;
    std::string module_dir;
    std::string state_path;
    bool check_only = false;
    bool list_devices = false;
    bool json = false;
};

int parse_options(int argc, char** argv, Options& options) {
    enum { kCheckConfig = 1000, kState, kListDevices, kJson, kSystem, kGroup, kAdminGroup };
    const option long_options[] = {
        {"config", required_argument, nullptr, 'c'},
        {"socket", required_argument, nullptr, 's'},
        {"module-dir", required_argument, nullptr, 'm'},
        {"check-config", no_argument, nullptr, kCheckConfig},
        {"state", required_argument, nullptr, kState},
        {"list-devices", no_argument, nullptr, kListDevices},
        {"json", no_argument, nullptr, kJson},
        {"system", no_argument, nullptr, kSystem},
        {"group", required_argument, nullptr, kGroup},
        {"admin-group", required_argument, nullptr, kAdminGroup},
        {"verbose", no_argument, nullptr, 'v'},
        {"quiet", no_argument, nullptr, 'q'},
        {"help", no_argument, nullptr, 'h'},
        {"version", no_argument, nullptr, 'V'},
        {nullptr, 0, nullptr, 0},
    };
    for (;;) {
        const int c = getopt_long(argc, argv, "c:s:m:vqhV", long_options, nullptr);
        if (c == -1) {
            break;
        }
        switch (c) {
        case 'c':
            options.config_path = optarg;
            break;
        case 's':
            options.socket_path = optarg;
            break;
        case 'm':
            options.module_dir = optarg;
            break;
        case kCheckConfig:
            options.check_only = true;
            break;
        case kState:
            options.state_path = optarg;
            break;
        case kListDevices:
            options.list_devices = true;
            break;
        case kJson:
            options.json = true;
            break;
        case kSystem:
            options.system = true;
            break;
        case kGroup:
            options.group = optarg;
            break;
        case kAdminGroup:
            options.admin_group = optarg;
            break;
        case 'v':
            audiod::set_log_level(audiod::LogLevel::debug);
            break;
        case 'q':
            audiod::set_log_level(audiod::LogLevel::warning);
            break;
        case 'h':
            std::fputs(kUsage, stdout);
            return 0;
        case 'V':
            std::printf("audiod %s\n", AUDIOD_VERSION_STRING);
            return 0;
        default:
            std::fputs("Try 'audiod --help' for more information.\n", stderr);
            return 2;
        }
    }
    if (optind < argc) {
        std::fprintf(stderr, "audiod: unexpected argument '%s'\n", argv[optind]);
        std::fputs("Try 'audiod --help' for more information.\n", stderr);
        return 2;
    }
    if (!options.system && (options.group != "audio" || !options.admin_group.empty())) {
        std::fputs("audiod: --group and --admin-group go with --system\n"
                   "Try 'audiod --help' for more information.\n",
                   stderr);
        return 2;
    }
    if (options.json && !options.list_devices) {
        std::fputs("audiod: --json goes with --list-devices\n"
                   "Try 'audiod --help' for more information.\n",
                   stderr);
        return 2;
    }
    return -1;
}

// The configuration: --config, else the first file found where audiod looks
// (a file created since the start is found by a reload too), else the
// built-in defaults; or "FILE:LINE: reason".
std::variant<audiod::ServerConfig, std::string> read_configuration(const Options& options) {
    const std::string path = options.config_path.empty() ? audiod::find_config_file(options.system)
                                                         : options.config_path;
    if (path.empty()) {
        return audiod::builtin_config();
    }
    return audiod::load_config(path);
}

// A group's id by name, or why not.
std::variant<gid_t, std::string> group_id(const std::string& name) {
    group entry{};
    group* found = nullptr;
    std::vector<char> buffer(16384);
    if (::getgrnam_r(name.c_str(), &entry, buffer.data(), buffer.size(), &found) != 0 ||
        found == nullptr) {
        return "no group named '" + name + "'";
    }
    return found->gr_gid;
}

} // namespace

int main(int argc, char** argv) {
    using namespace audiod;
    Options options;
    if (const int rc = parse_options(argc, argv, options); rc >= 0) {
        return rc;
    }

    if (options.list_devices) {
        ModuleLoader modules(options.module_dir.empty() ? default_module_directory()
                                                        : options.module_dir);
        const DeviceListing listing = list_devices(modules);
        const std::string text = options.json ? devices_json(listing) : devices_table(listing);
        std::fputs(text.c_str(), stdout);
        for (const std::string& skipped : listing.skipped) {
            std::fprintf(stderr, "audiod: skipped: %s\n", skipped.c_str());
        }
        for (const std::string& error : listing.errors) {
            std::fprintf(stderr, "audiod: %s\n", error.c_str());
        }
        return listing.errors.empty() ? 0 : 1;
    }

    auto loaded = read_configuration(options);
    if (auto* error = std::get_if<std::string>(&loaded)) {
        std::fprintf(stderr, "audiod: bad configuration: %s\n", error->c_str());
        return 1;
    }
    ServerConfig config = std::move(std::get<ServerConfig>(loaded));
    if (options.check_only) {
        std::printf("%s: OK (%zu sink%s, default %s)\n", config.source.c_str(), config.sinks.size(),
                    config.sinks.size() == 1 ? "" : "s", config.default_sink.c_str());
        return 0;
    }
    log_info("main", "audiod " AUDIOD_VERSION_STRING " config=\"" + config.source + "\"");

    // Block the stop signals before any thread starts, so every thread
    // inherits the mask and they arrive only through the signalfd.
    sigset_t mask;
    sigemptyset(&mask);
    sigaddset(&mask, SIGINT);
    sigaddset(&mask, SIGTERM);
    sigaddset(&mask, SIGHUP);
    pthread_sigmask(SIG_BLOCK, &mask, nullptr);
    std::signal(SIGPIPE, SIG_IGN);

    auto activation = take_activated_socket();
    if (auto* error = std::get_if<std::string>(&activation)) {
        std::fprintf(stderr, "audiod: socket activation: %s\n", error->c_str());
        return 1;
    }
    auto* activated = std::get_if<ActivatedSocket>(&activation);
    const ServiceNotifier service = ServiceNotifier::from_environment();

    // A system-wide server: who may connect (the socket's group) and who
    // may change what is shared (control/access_policy.h).
    AccessPolicy policy;
    std::optional<SocketGroup> socket_group; // members may connect; nobody else
    if (options.system) {
        policy.per_user = true;
        auto access = group_id(options.group);
        if (auto* error = std::get_if<std::string>(&access)) {
            std::fprintf(stderr, "audiod: --group: %s (the group whose members may play)\n",
                         error->c_str());
            return 1;
        }
        socket_group = SocketGroup{std::get<gid_t>(access), options.group};
        if (!options.admin_group.empty()) {
            auto admins = group_id(options.admin_group);
            if (auto* error = std::get_if<std::string>(&admins)) {
                std::fprintf(stderr, "audiod: --admin-group: %s\n", error->c_str());
                return 1;
            }
            policy.admin_group = std::get<gid_t>(admins);
        }
    }

    const bool chosen = !options.socket_path.empty() || socket_path_from_environment();
    std::string socket_path = !options.socket_path.empty() ? options.socket_path
                              : options.system && !chosen  ? kSystemSocketPath
                                                           : default_socket_path();
    if (activated != nullptr) {
        // The service manager made the socket and its directory, and keeps
        // them; a --socket option is only a name for the same thing.
        if (!options.socket_path.empty() && options.socket_path != activated->path) {
            log_warning("main", "serving the passed socket " + activated->path + ", not --socket " +
                                    options.socket_path);
        }
        socket_path = activated->path;
    } else if (std::string error = options.system && !chosen
                                       ? prepare_shared_socket_directory(socket_path)
                                       : prepare_socket_directory(socket_path, !chosen);
               !error.empty()) {
        std::fprintf(stderr, "audiod: %s\n", error.c_str());
        return 1;
    }
    auto lock = InstanceLock::acquire(socket_path);
    if (auto* error = std::get_if<std::string>(&lock)) {
        std::fprintf(stderr, "audiod: %s\n", error->c_str());
        return 1;
    }

    AppStateStore state(!options.state_path.empty() ? options.state_path
                        : options.system            ? std::string(kSystemStatePath)
                                                    : AppStateStore::default_path());
    if (const Status loaded = state.load(); !loaded.ok()) {
        log_warning("main", loaded.reason());
    }
    log_info("main", install_rt_time_guard());
    ModuleLoader modules(options.module_dir.empty() ? default_module_directory()
                                                    : options.module_dir);
    // The PulseAudio-protocol server: on by default for a server on its
    // default socket (a user's, or a system-wide one's on
    // /run/pulse/native), and wherever the configuration names a pulse
    // socket (a server on a socket of its own, a test's say, would
    // otherwise take the user's pulse socket).
    const bool pulse_wanted = config.pulse.enable.value_or(!config.pulse.socket.empty() || !chosen);
    const std::string pulse_socket = !config.pulse.socket.empty() ? config.pulse.socket
                                     : options.system             ? pulse::kSystemPulseSocket
                                                                  : pulse::default_pulse_socket();
    Engine engine(std::move(config), modules, state);
    pulse::EngineGateway pulse_gateway;
    pulse::PulseServer pulse_server(pulse_gateway);
    pulse_server.set_shared_memory(engine.config().pulse.shared_memory);
    pulse_server.set_access_policy(policy);
    bool pulse_serving = false;
    Status served = Status::success();
    {
        ControlServer server(engine);
        server.set_access_policy(policy);
        server.serve_gateway(pulse_gateway);
        server.set_reloader([&]() -> std::variant<std::string, ClientError> {
            (void)service.reloading();
            auto next = read_configuration(options);
            std::variant<std::string, ClientError> result = ClientError{};
            if (const auto* error = std::get_if<std::string>(&next)) {
                result = ClientError{AUDIOD_E_INVALID, *error};
            } else {
                result = engine.reload(std::move(std::get<ServerConfig>(next)));
            }
            (void)service.ready("serving " + socket_path);
            return result;
        });
        if (const Status started = engine.start(); !started.ok()) {
            std::fprintf(stderr, "audiod: cannot start: %s\n", started.reason().c_str());
            return 1;
        }
        UniqueFd listener;
        if (activated != nullptr) {
            listener = std::move(activated->fd);
        } else {
            auto bound = listen_on(socket_path, socket_group);
            if (auto* failed = std::get_if<std::string>(&bound)) {
                std::fprintf(stderr, "audiod: %s\n", failed->c_str());
                return 1;
            }
            listener = std::move(std::get<UniqueFd>(bound));
        }
        log_info("main", std::string(activated != nullptr ? "serving passed socket="
                                                          : "listening socket=") +
                             socket_path + " state=\"" + state.path() + "\"");
        // The TCP listener, where configured, beside the pulse socket.
        if (pulse_wanted && !engine.config().pulse.tcp.empty()) {
            (void)pulse::serve_pulse_tcp(pulse_server, engine.config().pulse.tcp,
                                         engine.config().pulse.cookie);
        }
        if (activated != nullptr && activated->pulse_fd) {
            // audiod-pulse.socket: the service manager made it and keeps it.
            if (pulse_wanted) {
                (void)pulse::serve_passed_pulse_socket(
                    pulse_server, std::move(*activated->pulse_fd), activated->pulse_path);
            } else {
                log_info("main", "the passed pulse socket is not served ([pulse] enable = false)");
            }
        } else {
            pulse_serving =
                pulse_wanted && pulse::start_pulse_server(pulse_server, pulse_socket, socket_group);
        }
        if (const Status told = service.ready("serving " + socket_path); !told.ok()) {
            log_warning("main", told.reason());
        }
        served = server.run(std::move(listener));
        (void)service.stopping();
        pulse_server.stop();
    }
    if (pulse_serving) {
        ::unlink(pulse_socket.c_str());
    }
    engine.stop();
    if (activated == nullptr) {
        ::unlink(socket_path.c_str()); // a passed socket stays with its manager
    }
    if (!served.ok()) {
        log_error("main", served.reason());
        return 1;
    }
    log_info("main", "stopped");
    return 0;
}
