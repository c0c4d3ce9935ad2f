// A house on one server, for the multi-room tests (test_rooms.cpp,
// test_groups.cpp): a sender of the probe to a multicast group, and rooms
// that receive it. Each room is an RTP source with a link offset of 150
// ms playing into a file sink whose clock is off by the room's ppm and
// that writes when each frame played (play-times), measured by
// audiod-sync-probe. The sender is an RTP sink `net`, or the group `net`
// with local members (file sinks of the same kind, played in step).
#pragma once

#include "helpers.h"

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <utility>
#include <vector>

namespace audiod::test {

// A room: a file sink with its clock set `ppm` off, writing its audio and
// when it played it.
std::string room_sink(const TempDir& dir, const std::string& name, int ppm);
// The room as audiod-sync-probe takes it: NAME=WAV,TIMES.
std::string room_measure(const TempDir& dir, const std::string& name);
// The line of `out` that starts with `key`, as audiod-sync-probe --json prints.
std::string json_line(const std::string& out, const std::string& key);

struct House {
    static constexpr uint32_t kLinkOffsetMs = 150;

    House(const TempDir& dir, std::vector<std::pair<std::string, int>> rooms,
          std::string payload = "l16");
    // Keeps the recordings of a test that failed (keep_recordings()).
    ~House();
    House(const House&) = delete;
    House& operator=(const House&) = delete;

    [[nodiscard]] std::string sender_options() const;
    [[nodiscard]] std::string receiver_options(const std::string& room) const;
    // "key=value key=value" as TOML lines.
    static std::string toml(const std::string& options);
    // The server's configuration: a null sink `spare` (the default), the
    // sender, each room and its receiver, and `extra` (more sinks).
    [[nodiscard]] std::string config(const std::string& extra = "") const;
    // Every room and local member, measured: audiod-sync-probe --json
    // --series (by the noise bursts with `bursts`: Opus keeps no ramp).
    [[nodiscard]] std::string measure(double settle_s, bool bursts = false) const;
    // Rooms and local members as audiod-sync-probe takes them.
    [[nodiscard]] std::vector<std::string> measured_rooms() const;
    // With $AUDIOD_TEST_KEEP set, copies the recordings there, in a folder
    // named for the test, for a look after it: done when a test failed.
    void keep_recordings() const;

    const TempDir& dir;
    std::vector<std::pair<std::string, int>> rooms;
    std::string payload;
    uint16_t port;
    std::string group;
    std::map<std::string, uint16_t> networks;          // room -> the port its relay sends to
    std::map<std::string, uint32_t> delays;            // room -> its receiver's delay-ms
    std::string sender_extra;                          // more sender options, "key=value ..."
    std::map<std::string, std::string> receiver_extra; // room -> more of its receiver's
    // With any, the sender is a group ([groups.net]); each local member is
    // a room sink of this server played in step: name, ppm, delay-ms.
    struct Local {
        std::string name;
        int ppm = 0;
        uint32_t delay_ms = 0;
    };
    std::vector<Local> local;
    // Rooms that are not this server's, measured with the others:
    // "NAME=WAV,TIMES" as audiod-sync-probe takes them.
    std::vector<std::string> also_measured;
    // Without: another program sends (the server has no sender).
    bool own_sender = true;
    uint8_t payload_type = 96;
};

// A player of a probe of `seconds` into `sink`, with a long buffer so that
// a loaded machine does not make it run dry (a gap in what every room
// heard).
std::vector<std::string> probe_player(const TempDir& dir, double seconds, bool ramp = true,
                                      const std::string& sink = "net");

// The points of one pair's series after `from_s`: the first one's time,
// the largest |Δ| from it on, from when on |Δ| stayed within `bound_us`
// (-1: it ended out of bounds) with the points since, and when it first
// stayed within it for a second (`rejoined_s`, -1: never).
struct After {
    double first_s = -1;
    double max_us = 0;
    size_t points = 0;
    double settled_s = -1;
    size_t settled_points = 0;
    double rejoined_s = -1;
};
After series_after(const std::string& out, const std::string& pair, double from_s,
                   double bound_us = 100);

// Where a pair's series has its longest gap (the rooms did not both play):
// when it began.
double gap_start(const std::string& out, const std::string& pair);

// Waits until every room and local member has heard the end of what was
// sent, once the player is done: each has played half a second more than
// the link offset since (a receiver that went idle first, for a sender
// that stops sending in silence).
void wait_until_rooms_heard(const House& house);

// A field of a group's local member, or of a room that reports to it, as
// `audioctl --json list groups` gives them; "" if there is none.
std::string group_member_field(const std::string& group, const std::string& sink,
                               const std::string& key);
std::string group_room_field(const std::string& group, const std::string& room,
                             const std::string& key);

// `audioctl` VERB... with `options` ("key=value key=value") after it.
void ctl_with_options(std::vector<std::string> args, const std::string& options);

// Every pair of rooms in `out` named in `pairs` (all when empty) heard the
// probe within 100 µs once in step (within 5 s), at `points` or more grid
// points after the settle time.
void check_pairs_in_step(const std::string& out, uint64_t points,
                         const std::vector<std::string>& pairs = {});

} // namespace audiod::test
