// audioctl: inspects and controls a running audiod from the shell.
#include "audiod/audiod.h"
#include "command_line.h"
#include "commands.h"
#include "protocol/socket_path.h"
#include "protocol/version.h"

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <getopt.h>
#include <string>
#include <vector>

namespace {

constexpr const char* kUsage = R"(Usage: audioctl [OPTION]... COMMAND [ARGUMENT]...
Inspect and control the audiod sound server.

Inspecting:
  list [sinks|sources|streams|clients|apps|groups]
                   show sinks and/or streams (playback and record), the
                   sources, the connected clients, the applications, or
                   the groups.
                   Sources: every sink's monitor, NAME.monitor, which
                   carries exactly what the sink plays. Sinks: name (* = default),
                   type, state, rate, channels, quantum, latency, format,
                   volume, mute, streams, xruns. Streams: id, application,
                   sink, state (starting, running, stalled, paused, moving,
                   draining, drained), volume, mute, underruns (record
                   streams: overruns), format, rate,
                   channels, pid. Clients: id, pid, executable,
                   application, streams. Apps: every application playing
                   now, remembered in the state file or with a rule in
                   the configuration, with its volume, mute, preferred
                   sink, streams playing, where its settings come from
                   (set at run time, rule, default) and when it last
                   played (now, a time, or never: a name never seen may
                   be a typo). Groups: each group's state, destination,
                   payload and link offset, and each local member's
                   state (in-step, waiting: no timing yet, absent: its
                   sink is not loaded), stream, delay-ms, sync error
                   (µs; + late) and realigns.
  info             server version, rate, quantum, scheduling in force,
                   uptime, default sink and source, counts, state file
                   and sinks.
  watch            print every event as it happens, one per line: streams,
                   sinks and sources added, removed, moved or changed, an
                   application's volume or mute, the default sink or
                   source changing, a room or group member falling out
                   of step (stream-out-of-step, with why: realigned,
                   untimed, off-by-N-us) and back (stream-in-step). Runs
                   until Ctrl-C.

Controlling (TARGET is a stream id, app:NAME for every stream of an
application, sink:NAME, or source:NAME for a capture source):
  set-volume TARGET LEVEL
                   LEVEL is absolute (50%, 0.5, -6dB, 0dB) or a step (+5%,
                   -5%, +0.1, +3dB, -=3dB). A value written -NdB is an
                   absolute level; write a step down in dB as -=NdB.
                   Stream, application and sink volumes multiply; a record
                   stream's level is its own times its capture source's
                   (a monitor records what its sink plays). Changes ramp
                   over 5 ms, so they never click.
  mute TARGET [on|off|toggle]
                   silence TARGET (default: on) without losing its volume.
  move-stream STREAM SINK|SOURCE
                   move a playing stream (an id, or app:NAME for all of an
                   application's streams) to SINK without losing a sample.
                   The application then prefers SINK for its new streams,
                   also after restarts; a player that names its own sink
                   (audiod:NAME, a sink argument) is given that one, also
                   when it reconnects to a restarted server.
                   A record stream moves to a SOURCE (NAME.monitor).
  load-sink TYPE NAME [KEY=VALUE]...
                   open a sink at run time, e.g.
                   load-sink file rec path=/tmp/rec.wav quantum=64
  unload-sink NAME close a sink; its streams move to the default sink.
  load-source TYPE NAME [KEY=VALUE]...
                   open a capture source at run time, e.g.
                   load-source rtp studio address=239.1.2.3 payload=l16
  unload-source NAME
                   close a source; its record streams move to the default
                   sink's monitor.
  set-default-sink NAME
                   where new streams go (remembered across restarts).
  set-default-source NAME
                   what record streams that name no source record: a
                   capture source or SINK.monitor (remembered across
                   restarts; at first the default sink's monitor).
  suspend NAME     close a sink or capture source so that another program
                   can open its device; its streams play on the default
                   sink meanwhile (or wait, silent, if no other sink
                   works). It is not reopened until resumed.
  resume NAME      open a suspended sink or source again; its streams
                   come back to it.
  reload           make the server read its configuration again (as SIGHUP
                   does) and print what changed: sinks and sources opened,
                   closed or reopened with new settings while streams play.
                   A configuration with an error is refused with its file
                   and line (exit status 1), and the running one stays; so
                   does exit status 1 with an "error:" line per device that
                   could not be opened with its new settings.
  group-create NAME [KEY=VALUE]...
                   make a group at run time: an rtp sink NAME (KEY=VALUE
                   are its options, as under [groups.NAME] in
                   audiod.conf(5): destination, port, payload, aes67 ...)
                   with link-offset-ms (default 150) that rooms receive in
                   step, e.g. group-create house destination=239.10.10.1
                   payload=l24. Add this server's sinks with group-add. It
                   lasts through reloads, until group-delete or a stop.
  group-delete GROUP
                   close a group made at run time (its streams move to the
                   default sink); a configured group's sink closes too,
                   and the group plays again once it is loaded.
  group-add GROUP SINK [delay-ms=N]
                   make SINK, a sink of this server, play the group GROUP
                   in step with its rooms; delay-ms is how late SINK's
                   sound comes out (an HDMI or Bluetooth path), played that
                   much earlier. Given again, it changes the delay. Lasts
                   until the configuration is reloaded.
  group-remove GROUP SINK
                   SINK no longer plays the group.
  group-room GROUP ROOM [volume=LEVEL] [mute=on|off] [delay-ms=N|own]
  group-room GROUP ROOM reset
                   ask ROOM, a receiver elsewhere that plays GROUP (by the
                   name list groups shows it by: its member-name), for a
                   volume (80%, -2dB), to be muted or not, or for a delay
                   trim (own: its own delay-ms), sent with the group's
                   reports to every room; reset lets it go back to its
                   own settings. At most 8 rooms a group.
  forget app:NAME  drop the volume, mute and sink set at run time for an
                   application, and when it last played: its rule in the
                   configuration ([apps.NAME]) or the defaults apply again.
  kill-client ID   disconnect client ID (an id from `list clients`) and end
                   its streams. A libaudiod player is told why, and its
                   next call fails with "this client was ended on the
                   server" instead of reconnecting as it would after a
                   server restart. On a shared server, a user's own clients
                   only (admins: any).

Application volumes, mutes and preferred sinks are remembered by
application name in the server's state file (see `audioctl info`), and
win over the configuration's [apps.NAME] rules until forgotten. They may be
set before the application ever plays (a start-up script): audioctl then
says "NAME has not played yet; remembered", and they apply from its first
frame.

Options:
  -j, --json       print JSON: `list` prints an array of objects, each with
                   "kind" (sink, stream or client); `info` an object;
                   `watch` one object per line; other commands {"ok":true}.
  -s, --socket PATH
                   talk to the server at PATH instead of $AUDIOD_SOCKET, or
                   the user's server ($XDG_RUNTIME_DIR/audiod/socket, else
                   /tmp/audiod-$UID/socket), else the system-wide one
                   (/run/audiod/socket). `info` says which it reached.
  -t, --timeout MS give up on the server after MS milliseconds (default 2000).
  -h, --help       show this help and exit.
  -V, --version    show the version and exit.

Exit status: 0 on success, 1 if the server is unreachable or refuses the
command (no such stream, application or sink ...), 2 on a usage error.

Examples:
  audioctl list streams
  audioctl set-volume app:mpv 50%
  audioctl forget app:mpv
  audioctl move-stream 7 headphones
  audioctl mute sink:speakers toggle
  audioctl --json watch
)";

} // namespace

int main(int argc, char** argv) {
    using namespace audiod::ctl;
    static constexpr audiod::cli::Option kOptions[] = {
        {"json", no_argument, 'j'},
        {"socket", required_argument, 's'},
        {"timeout", required_argument, 't'},
    };
    const audiod::cli::Tool tool{.name = "audioctl",
                                 .usage = kUsage,
                                 .version = AUDIOD_VERSION_STRING,
                                 .short_version = true,
                                 .options_first = true};
    Session session;
    std::string socket_path;
    const int first =
        audiod::cli::parse_command_line(argc, argv, tool, kOptions, [&](int c, const char* arg) {
            switch (c) {
            case 'j':
                session.json = true;
                break;
            case 's':
                socket_path = arg;
                break;
            case 't': {
                char* end = nullptr;
                const long ms = std::strtol(arg, &end, 10);
                if (*end != '\0' || ms < 1 || ms > 600000) {
                    std::fprintf(stderr, "audioctl: invalid timeout '%s'\n", arg);
                    std::exit(2);
                }
                session.timeout_ms = static_cast<int>(ms);
                break;
            }
            }
        });
    if (first >= argc) {
        std::fputs("audioctl: no command given\nTry 'audioctl --help' for more information.\n",
                   stderr);
        return 2;
    }
    const std::string command = argv[first];
    std::vector<std::string> args(argv + first + 1, argv + argc);
    // Options may also follow the command (audioctl list --json).
    std::erase_if(args, [&](const std::string& a) {
        if (a == "--json" || a == "-j") {
            session.json = true;
            return true;
        }
        return false;
    });
    using Handler = int (*)(Session&, const Args&);
    static const std::pair<const char*, Handler> kCommands[] = {
        {"list", run_list},
        {"info", run_info},
        {"set-volume", run_set_volume},
        {"mute", run_mute},
        {"move-stream", run_move_stream},
        {"load-sink", run_load_sink},
        {"unload-sink", run_unload_sink},
        {"load-source", run_load_source},
        {"unload-source", run_unload_source},
        {"set-default-sink", run_set_default_sink},
        {"set-default-source", run_set_default_source},
        {"suspend", run_suspend},
        {"resume", run_resume},
        {"forget", run_forget},
        {"kill-client", run_kill_client},
        {"reload", run_reload},
        {"group-add", run_group_add},
        {"group-remove", run_group_remove},
        {"group-create", run_group_create},
        {"group-delete", run_group_delete},
        {"group-room", run_group_room},
        {"watch", run_watch},
    };
    Handler handler = nullptr;
    for (const auto& [name, run] : kCommands) {
        if (command == name) {
            handler = run;
        }
    }
    if (handler == nullptr) {
        std::fprintf(stderr, "audioctl: unknown command '%s'\n", command.c_str());
        std::fputs("Try 'audioctl --help' for more information.\n", stderr);
        return 2;
    }

    // The user's server first, then the system-wide one (unless told which).
    const std::vector<std::string> candidates =
        socket_path.empty() ? audiod::client_socket_paths() : std::vector<std::string>{socket_path};
    if (const int rc = session.channel.connect_first(candidates, &socket_path); rc != 0) {
        std::string tried;
        for (const std::string& path : candidates) {
            tried += (tried.empty() ? "" : " or ") + path;
        }
        std::fprintf(stderr, "audioctl: cannot reach audiod at %s: %s\n", tried.c_str(),
                     audiod_strerror(rc));
        return 1;
    }
    session.socket_path = socket_path;
    audiod::proto::Hello hello;
    hello.app_name = "audioctl";
    audiod::proto::HelloReply reply;
    if (const int rc =
            session.channel.call_for(hello, &reply, audiod::Deadline::after_ms(session.timeout_ms));
        rc != 0) {
        const std::string& detail = session.channel.last_error();
        std::fprintf(stderr, "audioctl: audiod at %s did not answer: %s\n", socket_path.c_str(),
                     detail.empty() ? audiod_strerror(rc) : detail.c_str());
        return 1;
    }
    return handler(session, args);
}
