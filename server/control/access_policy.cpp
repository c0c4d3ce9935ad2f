#include "control/access_policy.h"

#include "engine/app_name.h"

#include <algorithm>
#include <cerrno>
#include <set>
#include <sys/socket.h>
#include <unistd.h>
#include <vector>

namespace audiod {

bool is_admin(const AccessPolicy& policy, int fd, uid_t uid) {
    if (!policy.per_user || uid == 0 || uid == ::geteuid()) {
        return true;
    }
    if (!policy.admin_group) {
        return false;
    }
    // The peer's groups as they were when it connected (Linux 4.13+).
    std::vector<gid_t> groups(64);
    for (;;) {
        socklen_t length = static_cast<socklen_t>(groups.size() * sizeof(gid_t));
        if (::getsockopt(fd, SOL_SOCKET, SO_PEERGROUPS, groups.data(), &length) == 0) {
            groups.resize(length / sizeof(gid_t));
            break;
        }
        if (errno != ERANGE || groups.size() >= 65536) {
            return false;
        }
        groups.resize(length / sizeof(gid_t) + 1);
    }
    return std::find(groups.begin(), groups.end(), *policy.admin_group) != groups.end();
}

std::string app_of(const AccessPolicy& policy, const Caller& caller, const std::string& declared) {
    return policy.per_user ? user_app_name(caller.uid, declared) : declared;
}

std::string requested_app(const AccessPolicy& policy, const Caller& caller,
                          const std::string& name) {
    // An admin names applications as the server does (as `audioctl list
    // apps` shows them to an admin): "1000/mpv", "rtp:studio".
    if (!policy.per_user || caller.admin) {
        return name;
    }
    return user_app_name(caller.uid, name);
}

std::optional<std::string> shown_app(const AccessPolicy& policy, const Caller& caller,
                                     const std::string& app) {
    if (!policy.per_user || caller.admin) {
        return app;
    }
    // Rules and the server's own players ("rtp:studio") are everyone's.
    if (!is_user_app_name(app)) {
        return app;
    }
    if (app == user_app_name(caller.uid, bare_app_name(app))) {
        return std::string(bare_app_name(app));
    }
    return std::nullopt;
}

bool owns_app(const AccessPolicy& policy, const Caller& caller, const std::string& app) {
    if (!policy.per_user || caller.admin) {
        return true;
    }
    return is_user_app_name(app) && app == user_app_name(caller.uid, bare_app_name(app));
}

void show_streams(const AccessPolicy& policy, const Caller& caller,
                  std::vector<proto::StreamInfo>& streams) {
    std::erase_if(streams, [&](proto::StreamInfo& info) {
        const auto shown = shown_app(policy, caller, info.app);
        if (!shown) {
            return true;
        }
        info.app = *shown;
        return false;
    });
}

void show_apps(const AccessPolicy& policy, const Caller& caller,
               std::vector<proto::AppInfo>& apps) {
    // A user's own NAME stands in for the rule of the same name, which it
    // already follows unless changed.
    std::set<std::string> own;
    for (const proto::AppInfo& info : apps) {
        if (policy.per_user && !caller.admin &&
            info.name == user_app_name(caller.uid, bare_app_name(info.name))) {
            own.insert(std::string(bare_app_name(info.name)));
        }
    }
    std::erase_if(apps, [&](proto::AppInfo& info) {
        std::optional<std::string> shown = shown_app(policy, caller, info.name);
        if (!shown.has_value()) {
            return true; // another user's
        }
        if (own.count(info.name) != 0) {
            return true; // a rule the user's own entry stands in for
        }
        info.name = std::move(*shown);
        return false;
    });
}

} // namespace audiod
