#include "libjack_clients.h"

#include "jack_link.h"

#include <algorithm>
#include <condition_variable>
#include <mutex>
#include <vector>

namespace audiod::jack {

namespace {

struct Clients {
    std::mutex mutex;
    std::condition_variable closed;
    std::vector<JackLink*> running; // open, and not yet closing
    int open = 0;                   // opened, and jack_client_close not yet returned
    bool server_lost = false;       // libjack's flag, as last seen: clear
    uint64_t losses = 0;            // note_server_lost calls so far
    std::string server;             // the open clients' JACK server

    [[nodiscard]] bool safe() const { return !server_lost || open == 0; }
};

// Never destroyed: a close left to a thread of its own (close_link) may
// still be under way when the process exits.
Clients& clients() {
    static auto* const all = new Clients;
    return *all;
}

// Never destroyed, for the same reason.
std::mutex& turn_mutex() {
    static auto* const mutex = new std::mutex;
    return *mutex;
}

} // namespace

OpenCloseTurn::OpenCloseTurn()
    : turn_(turn_mutex()) {}

uint64_t losses_so_far() {
    Clients& c = clients();
    const std::lock_guard lock(c.mutex);
    return c.losses;
}

void note_client_opened(JackLink& link, uint64_t losses_before) {
    Clients& c = clients();
    const std::lock_guard lock(c.mutex);
    c.running.push_back(&link);
    ++c.open;
    // libjack's open sets its flag again; a loss told meanwhile (another
    // client's shutdown, on libjack's thread) may have cleared it after
    // that, and then it stays as it was said.
    if (c.losses == losses_before) {
        c.server_lost = false;
    }
    c.server = link.server();
}

void note_client_closing(JackLink& link) {
    Clients& c = clients();
    const std::lock_guard lock(c.mutex);
    std::erase(c.running, &link);
}

void note_client_closed() {
    Clients& c = clients();
    {
        const std::lock_guard lock(c.mutex);
        --c.open;
    }
    c.closed.notify_all();
}

void note_server_lost() {
    Clients& c = clients();
    const std::lock_guard lock(c.mutex);
    c.server_lost = true;
    ++c.losses;
}

std::optional<std::string> other_server_in_use(const std::string& server) {
    Clients& c = clients();
    const std::lock_guard lock(c.mutex);
    if (c.open > 0 && c.server != server) {
        return c.server;
    }
    return std::nullopt;
}

bool safe_to_open() {
    Clients& c = clients();
    const std::lock_guard lock(c.mutex);
    return c.safe();
}

bool wait_until_safe_to_open(std::chrono::milliseconds wait, std::string* why) {
    Clients& c = clients();
    std::unique_lock lock(c.mutex);
    if (c.safe()) {
        return true;
    }
    // Those told their server went away are being closed by their owners
    // already; one whose notice has not come yet would stay open, and
    // libjack would free it.
    for (JackLink* link : c.running) {
        if (link->fail_for_reopen()) {
            const audiod_host* host = link->host();
            if (host != nullptr && host->log != nullptr) {
                host->log(AUDIOD_LOG_WARNING, "jack",
                          ("JACK client " + link->client_name() +
                           " closes and reopens: its JACK server went away")
                              .c_str());
            }
        }
    }
    if (c.closed.wait_for(lock, wait, [&] { return c.safe(); })) {
        return true;
    }
    *why = std::to_string(c.open) +
           " JACK client(s) of a JACK server that went away have not closed yet (libjack would "
           "free them under this open)";
    return false;
}

} // namespace audiod::jack
