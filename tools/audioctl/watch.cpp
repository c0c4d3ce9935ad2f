// audioctl watch: prints the server's events as they happen, one per line,
// until interrupted or the server goes away.
#include "commands.h"

#include "output.h"

#include <atomic>
#include <cerrno>
#include <csignal>
#include <cstdio>
#include <poll.h>

namespace audiod::ctl {

namespace {

std::atomic<bool> g_stop{false};

void on_signal(int) {
    g_stop.store(true);
}

} // namespace

int run_watch(Session& session, const Args& args) {
    if (!args.empty()) {
        return usage("watch takes no arguments");
    }
    struct sigaction action {};
    action.sa_handler = on_signal; // no SA_RESTART: poll returns EINTR
    sigaction(SIGINT, &action, nullptr);
    sigaction(SIGTERM, &action, nullptr);
    std::setvbuf(stdout, nullptr, _IOLBF, 0);

    const int rc = session.channel.call(proto::Subscribe{}, proto::MsgType::ok, nullptr,
                                        Deadline::after_ms(session.timeout_ms));
    if (rc != 0) {
        return server_error(session, "watch", rc);
    }
    proto::Event event;
    while (!g_stop.load()) {
        while (session.channel.take_event(event)) {
            const std::string line = session.json ? event_json(event) : event_text(event);
            std::fputs(line.c_str(), stdout);
        }
        pollfd pfd{session.channel.fd(), POLLIN, 0};
        const int ready = ::poll(&pfd, 1, -1);
        if (ready < 0 && errno != EINTR) {
            return 1;
        }
        if (ready > 0) {
            if (const int pumped = session.channel.pump(); pumped != 0) {
                while (session.channel.take_event(event)) {
                    const std::string line = session.json ? event_json(event) : event_text(event);
                    std::fputs(line.c_str(), stdout);
                }
                if (const auto& farewell = session.channel.farewell()) {
                    std::fprintf(stderr, "audioctl: the server closed this connection: %s\n",
                                 farewell->message.c_str());
                } else {
                    std::fputs("audioctl: the server went away\n", stderr);
                }
                return 1;
            }
        }
    }
    return 0;
}

} // namespace audiod::ctl
