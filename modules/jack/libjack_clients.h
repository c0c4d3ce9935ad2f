// Every libjack client the jack module has open in this process, and the
// two rules of libjack's that they must keep.
//
// libjack keeps one JACK server's graph and engine for the whole process
// (jack2's JackLibGlobals): a client of a second server would read the
// first one's, so a client of another server is refused while any is open.
//
// And one flag, "the server is running": a client's shutdown clears it,
// and only a client that reaches a server sets it again. A client opened
// while it is clear first makes libjack close and free every client the
// process still has, telling no one. A sink whose jackd had gone away, its
// close slow on a loaded machine, was freed so under its own close by the
// engine's once-a-second reopen (std::terminate, in CI and in stress
// passes). So an open waits until every client has closed once a server
// has gone away, and fails any not yet told (to be reopened, as after any
// failure).
//
// Two things clear that flag with no shutdown callback: an open that JACK
// breaks off (seen: the next open freed a client the sink held, and the
// server crashed closing it; jack_link.cpp counts any failed open as a
// loss), and, as libjack's source reads, a client's own close: the server
// takes away what the client's process thread waits on, and a thread
// still waiting (a non-real-time client's, which libjack does not stop
// first) takes that for the server's end. An open that made its last look
// before such a close and then waited in libjack for it to finish would
// free every client the process still had. So opens and closes take turns
// (OpenCloseTurn), the look and the open in one, and an open clears a loss
// only if none was told while it ran.
#pragma once

#include <chrono>
#include <cstdint>
#include <mutex>
#include <optional>
#include <string>

namespace audiod::jack {

class JackLink;

// How many times libjack has told of a lost server, for note_client_opened.
// Thread: any.
uint64_t losses_so_far();
// jack_client_open has returned this link's client: libjack takes its
// server for running again, unless a loss was told after `losses_before`
// (losses_so_far() before the open). Thread: the link's join.
void note_client_opened(JackLink& link, uint64_t losses_before);
// The link is about to close its client: nothing is asked of it from now
// on. Thread: the one destroying the link.
void note_client_closing(JackLink& link);
// jack_client_close has returned. Thread: the one destroying the link.
void note_client_closed();
// libjack has told a client that its server went away. Thread: libjack's.
void note_server_lost();

// The server the open clients belong to, if there are any and it is not
// `server`. Thread: any.
std::optional<std::string> other_server_in_use(const std::string& server);
// Whether libjack may open a client now without freeing one it has: at
// once if no server has gone away since the last open, or no client is
// open. Otherwise every open client not yet failed is failed (its owner
// closes it, and reopens it a second later), and this waits up to `wait`
// for them all to close; false, with what is still open in `why`, if they
// have not. Thread: control.
bool wait_until_safe_to_open(std::chrono::milliseconds wait, std::string* why);
// The same, neither waiting nor failing anything: the last look just
// before jack_client_open, with the turn held. Thread: any.
bool safe_to_open();

// Held from the last look through jack_client_open, and around
// jack_client_close and its note. Thread: a link's join, or the one
// destroying it.
class OpenCloseTurn {
public:
    OpenCloseTurn();

private:
    std::lock_guard<std::mutex> turn_;
};

} // namespace audiod::jack
