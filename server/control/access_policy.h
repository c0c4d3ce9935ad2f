// Who may do what on a server shared by several users (audiod --system).
//
// A per-user server trusts everyone who can open its socket: they are the
// user. A system-wide server is reached by every member of its access group,
// so requests are checked against the caller's uid, as the kernel reports it
// (SO_PEERCRED), never as a client claims it:
//   - a user sees and controls only their own clients, streams and
//     application settings; sinks and sources are shared, for reading and
//     for playing into;
//   - changing what is shared (loading, unloading, sink volume and mute, the
//     default sink, reloading) needs an admin: root, the server's own user,
//     or a member of the configured admin group;
//   - application settings are kept per user: the server names a client's
//     application "UID/NAME" (mpv of uid 1000 is "1000/mpv"). A user names
//     their own as NAME and sees them so, with the rules and the server's
//     own players ("rtp:studio"); an admin sees and names every
//     application as the server does. [apps.NAME] rules apply to every
//     user's NAME.
// Thread: control.
#pragma once

#include "protocol/messages.h"

#include <optional>
#include <string>
#include <sys/types.h>
#include <vector>

namespace audiod {

struct AccessPolicy {
    bool per_user = false;            // a system-wide server: check callers
    std::optional<gid_t> admin_group; // its members are admins
};

struct Caller {
    uid_t uid = 0;
    bool admin = true;
};

// Whether the peer of connected socket `fd`, running as `uid`, is an admin.
[[nodiscard]] bool is_admin(const AccessPolicy& policy, int fd, uid_t uid);

// The application name a new stream of `caller`'s gets in the engine.
[[nodiscard]] std::string app_of(const AccessPolicy& policy, const Caller& caller,
                                 const std::string& declared);

// The engine's name for app:NAME in a request of `caller`'s.
[[nodiscard]] std::string requested_app(const AccessPolicy& policy, const Caller& caller,
                                        const std::string& name);

// How `caller` sees the engine's application `app`: nullopt if it is another
// user's (and the caller no admin).
[[nodiscard]] std::optional<std::string> shown_app(const AccessPolicy& policy, const Caller& caller,
                                                   const std::string& app);

// Whether the engine's application `app` is `caller`'s to control: a
// user's own ("UID/NAME" of theirs), or anything to an admin.
[[nodiscard]] bool owns_app(const AccessPolicy& policy, const Caller& caller,
                            const std::string& app);

// The streams and applications `caller` may see, as it sees them: another
// user's are left out, and the caller's own carry their bare NAME.
void show_streams(const AccessPolicy& policy, const Caller& caller,
                  std::vector<proto::StreamInfo>& streams);
void show_apps(const AccessPolicy& policy, const Caller& caller, std::vector<proto::AppInfo>& apps);

} // namespace audiod
